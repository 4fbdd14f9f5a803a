# The renames that move a libuv program's timers to timerwheel's timer
# layer (<timerwheel/uv_timer.h>): sed -f examples/uv_timer_port.sed prog.c.
# The timer's type and the uv_timer_* functions are renamed everywhere; a
# timer's close, and its close callback's parameter, where this example
# closes its timer (c->idle, on_idle_closed).
s|#include <uv\.h>|#include <timerwheel/uv_timer.h>|
s/\buv_timer_\(t\|cb\|init\|start\|stop\|again\|set_repeat\|get_repeat\|get_due_in\)\b/tw_uv_timer_\1/g
s/uv_close((uv_handle_t \*)&c->idle, /tw_uv_timer_close(\&c->idle, /
s/^static void on_idle_closed(uv_handle_t \*/static void on_idle_closed(tw_uv_timer_t */
