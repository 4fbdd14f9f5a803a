// SPDX-License-Identifier: MIT
//
// A request from another thread, applied on the owner's thread through the
// checked entry of the call it stands for (entry.hpp).
#include "entry.hpp"

int tw::apply_request(tw_wheel *w, const request_payload &p)
{
	switch (p.op) {
	case request_op::mod:
		return tw::entry::mod_checked(w, p.timer, p.expires, nullptr, "tw_post_mod");
	case request_op::mod_range:
		return tw::entry::mod_checked(w, p.timer, p.expires, &p.slack, "tw_post_mod_range");
	case request_op::del:
		return tw::entry::del_checked(w, p.timer, "tw_post_del");
	case request_op::none:
		break;
	}
	return -EINVAL;
}
