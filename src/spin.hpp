// SPDX-License-Identifier: MIT
//
// A spin lock for the process-wide tables (wheel ids, the debug registry).
// They are touched only when wheels are created or released, never on a
// timer operation, so a spin lock costs nothing there and keeps the core
// free of any threading library.
#ifndef TW_SPIN_HPP
#define TW_SPIN_HPP

#include "compiler.hpp"

namespace tw {

class spin_guard {
public:
	explicit spin_guard(bool &locked) : locked_(locked)
	{
		while (atomic_test_and_set<mo::acquire>(&locked_))
			;
	}
	~spin_guard() { atomic_clear<mo::release>(&locked_); }
	spin_guard(const spin_guard &) = delete;
	spin_guard &operator=(const spin_guard &) = delete;

private:
	bool &locked_;
};

} // namespace tw

#endif
