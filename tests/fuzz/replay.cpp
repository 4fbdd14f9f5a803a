// SPDX-License-Identifier: MIT
//
// Runs fuzz inputs without libFuzzer, so the seed corpus is a regression
// test in every build (gcc, ASan, valgrind): replay FILE|DIR...
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const std::string &path)
{
	FILE *f = fopen(path.c_str(), "rb");
	if (!f) {
		perror(path.c_str());
		return 1;
	}
	std::vector<uint8_t> buf;
	uint8_t chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf.insert(buf.end(), chunk, chunk + n);
	fclose(f);
	LLVMFuzzerTestOneInput(buf.data(), buf.size());
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, errors = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			errors++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			errors += run_file(argv[i]);
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			errors++;
			continue;
		}
		std::vector<std::string> names;
		while (struct dirent *e = readdir(d))
			if (e->d_name[0] != '.')
				names.push_back(std::string(argv[i]) + "/" + e->d_name);
		closedir(d);
		for (const std::string &p : names) {
			errors += run_file(p);
			files++;
		}
	}
	printf("replayed %d inputs, %d unreadable: no divergence\n", files, errors);
	return errors || files == 0 ? 1 : 0;
}
