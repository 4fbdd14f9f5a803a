// SPDX-License-Identifier: MIT
//
// Deletion from an open-addressing table with linear probing and no
// tombstones, shared by the process-wide tables (wheel ids, the debug
// registry). An empty cell is a value-initialised Cell.
#ifndef TW_PROBE_HPP
#define TW_PROBE_HPP

#include <stddef.h>

namespace tw {

// Empty cell `hole` (capacity a power of two): pull the later cells of its
// run back into the hole, unless a cell's home lies cyclically in
// (hole, j], where a lookup still finds it.
template <typename Cell, typename Home, typename Empty>
void probe_erase(Cell *cells, size_t capacity, size_t hole, Home home, Empty empty)
{
	for (size_t j = hole;;) {
		j = (j + 1) & (capacity - 1);
		if (empty(cells[j]))
			break;
		size_t k = home(cells[j]);
		bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
		if (!stays) {
			cells[hole] = cells[j];
			hole = j;
		}
	}
	cells[hole] = Cell{};
}

} // namespace tw

#endif
