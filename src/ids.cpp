// SPDX-License-Identifier: MIT
//
// The set of live wheel ids (see ids.hpp): open addressing with linear
// probing, 0 marking an empty cell, at most half full. It lives only while
// wheels do, so a program that destroys its wheels leaks nothing.
#include "ids.hpp"

#include <stddef.h>
#include <stdlib.h>

#include "probe.hpp"
#include "spin.hpp"

namespace {

uint32_t *cells;
size_t capacity; // 0 or a power of two
size_t used;
uint32_t counter;
bool locked;

size_t home(uint32_t id)
{
	return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> 32) & (capacity - 1);
}

bool contains(uint32_t id)
{
	if (!capacity)
		return false;
	for (size_t i = home(id); cells[i]; i = (i + 1) & (capacity - 1))
		if (cells[i] == id)
			return true;
	return false;
}

void place(uint32_t id)
{
	size_t i = home(id);
	while (cells[i])
		i = (i + 1) & (capacity - 1);
	cells[i] = id;
}

bool grow()
{
	size_t n = capacity ? capacity * 2 : 16;
	uint32_t *fresh = static_cast<uint32_t *>(calloc(n, sizeof(uint32_t)));
	if (!fresh)
		return false;
	uint32_t *old = cells;
	size_t old_capacity = capacity;
	cells = fresh;
	capacity = n;
	for (size_t i = 0; i < old_capacity; i++)
		if (old[i])
			place(old[i]);
	free(old);
	return true;
}

} // namespace

namespace tw::ids {

uint32_t take()
{
	tw::spin_guard g(locked);
	if ((used + 1) * 2 > capacity && !grow())
		return 0;
	// At most `used` live ids stand in the way, so this ends.
	uint32_t id;
	do
		id = ++counter;
	while (id == 0 || contains(id));
	place(id);
	used++;
	return id;
}

void give_back(uint32_t id)
{
	tw::spin_guard g(locked);
	if (!capacity)
		return;
	for (size_t i = home(id); cells[i]; i = (i + 1) & (capacity - 1)) {
		if (cells[i] != id)
			continue;
		tw::probe_erase(cells, capacity, i, [](uint32_t c) { return home(c); },
				[](uint32_t c) { return c == 0; });
		if (--used == 0) {
			free(cells);
			cells = nullptr;
			capacity = 0;
		}
		return;
	}
}

void set_last(uint32_t value)
{
	tw::spin_guard g(locked);
	counter = value;
}

} // namespace tw::ids
