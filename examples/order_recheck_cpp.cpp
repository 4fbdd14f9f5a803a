// SPDX-License-Identifier: MIT
//
// order_recheck_cpp: the order re-check in C++ with <timerwheel.hpp>. A shop
// takes orders in a burst; each reserves stock and is re-checked 30 minutes
// later, releasing the stock if it was not paid. An order owns its timer:
// paying erases the order, whose destructor cancels the re-check; the
// re-check of an unpaid order erases the order from inside its own
// callback. A customer who amends an order pushes its re-check back.
// Simulated clock: the loop jumps from next expiry to next expiry.
//
//   order_recheck_cpp [-n ORDERS]
//
// Exits 0 only if every unpaid order was re-checked exactly once, none
// early, none paid, and the stock books balance.
#include <timerwheel.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

class shop;

struct order {
	order(shop &s, unsigned long id, tws::clock::time_point due);
	shop &owner;
	unsigned long id;
	tws::clock::time_point due;
	tws::timer recheck; // cancelled by its destructor: erasing the order is enough
};

class shop {
public:
	explicit shop(tws::clock::time_point start) : wheel_(start) {}
	bool ok() const { return static_cast<bool>(wheel_); }

	void take(unsigned long id, tws::clock::time_point now)
	{
		auto o = std::make_unique<order>(*this, id, now + 30min);
		if (!o->recheck.arm(wheel_, o->due))
			failures_++;
		reserved_++;
		orders_.emplace(id, std::move(o));
	}
	// A paid order keeps its stock; its re-check goes with it.
	void pay(unsigned long id)
	{
		if (orders_.erase(id))
			paid_++;
	}
	// An amended order is re-checked 30 minutes after the amendment.
	void amend(unsigned long id, tws::clock::time_point now)
	{
		auto it = orders_.find(id);
		if (it == orders_.end())
			return;
		it->second->due = now + 30min;
		if (!it->second->recheck.rearm(wheel_, it->second->due))
			failures_++;
		amended_++;
	}
	// The re-check: runs once, never before the order's due time.
	void recheck(order &o)
	{
		if (wheel_.now() < o.due)
			early_++;
		rechecked_++;
		released_++;
		orders_.erase(o.id); // destroys o, and the timer whose callable runs now
	}
	// The loop: sleep until the next expiry, advance to it.
	void run()
	{
		while (wheel_.count() > 0)
			if (!wheel_.advance(wheel_.next_expiry()))
				failures_++;
	}
	tws::clock::time_point now() const { return wheel_.now(); }
	int report(unsigned long n) const
	{
		std::printf("order_recheck_cpp: %lu orders, %lu paid (re-check cancelled by the order's destructor), "
			    "%lu amended\n",
			    n, paid_, amended_);
		std::printf("order_recheck_cpp: %lu re-checked, %lu early, %lu left, %lu errors\n", rechecked_, early_,
			    static_cast<unsigned long>(orders_.size()), failures_);
		bool books = reserved_ == paid_ + released_ && rechecked_ == n - paid_;
		std::printf("order_recheck_cpp: stock reserved %lu = kept by paid %lu + released %lu: %s\n", reserved_,
			    paid_, released_, books ? "books balance" : "BOOKS DO NOT BALANCE");
		bool ok = books && early_ == 0 && failures_ == 0 && orders_.empty();
		std::printf("order_recheck_cpp: %s\n", ok ? "OK" : "FAILED");
		return ok ? 0 : 1;
	}

private:
	tws::wheel wheel_;
	std::unordered_map<unsigned long, std::unique_ptr<order>> orders_;
	unsigned long reserved_ = 0, paid_ = 0, amended_ = 0, rechecked_ = 0, released_ = 0, early_ = 0,
		      failures_ = 0;
};

order::order(shop &s, unsigned long i, tws::clock::time_point d)
	: owner(s), id(i), due(d), recheck([this] { owner.recheck(*this); })
{
}

} // namespace

int main(int argc, char **argv)
{
	unsigned long n = 100000;
	if (argc == 3 && std::strcmp(argv[1], "-n") == 0)
		n = std::strtoul(argv[2], nullptr, 10);
	else if (argc != 1) {
		std::fprintf(stderr, "usage: order_recheck_cpp [-n ORDERS]\n");
		return 2;
	}
	tws::clock::time_point t(1h); // the simulated clock
	shop s(t);
	if (!s.ok())
		return 1;
	// A 10-second burst; every third order is paid a minute later and every
	// seventh amended five minutes later.
	for (unsigned long id = 0; id < n; id++)
		s.take(id, t + std::chrono::microseconds(10s) * id / n);
	t += 1min;
	for (unsigned long id = 0; id < n; id += 3)
		s.pay(id);
	t += 4min;
	for (unsigned long id = 1; id < n; id += 7)
		s.amend(id, t);
	s.run();
	return s.report(n);
}
