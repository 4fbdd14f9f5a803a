/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uv's port header: a libuv program's timers move to the
 * uv_timer_t layer (<timerwheel/uv_timer.h>) without an edit to its
 * source. Include it before the program's own code, or give it to the
 * compiler:
 *
 *   cc -include timerwheel/uv_port.h prog.c $(pkg-config --cflags --libs timerwheel-uv)
 *
 * It includes <uv.h> first. Under a strict -std=c11, give the compiler the
 * feature macro the program defines for <uv.h> (-D_POSIX_C_SOURCE=200809L).
 *
 * Names. The header gives the layer libuv's spelling:
 *
 * - uv_timer_t, uv_timer_cb, uv_timer_init, uv_timer_start, uv_timer_stop,
 *   uv_timer_again, uv_timer_set_repeat, uv_timer_get_repeat and
 *   uv_timer_get_due_in are the layer's tw_uv_timer_ names.
 * - UV_TIMER is TW_UV_TIMER, the type of the layer's timers, which is
 *   UV_HANDLE. A walk callback or a switch that tests a handle's type for
 *   UV_TIMER finds them. It no longer finds libuv's own timers. A ported
 *   program has none, but a library's may still be on the loop.
 * - uv_close, uv_is_active, uv_is_closing, uv_ref, uv_unref, uv_has_ref,
 *   uv_walk, uv_handle_type_name and uv_handle_size are the functions
 *   below. They serve a layer timer through the layer. They hand every
 *   other handle to libuv unchanged.
 * - uv_handle_get_data, uv_handle_set_data, uv_handle_get_loop,
 *   uv_handle_get_type and the fields data, loop and type are libuv's own.
 *   A layer timer has them where uv_handle_t has them.
 *
 * The names are object-like macros. So a function's address taken, as in
 * a callback table holding uv_close, is the port's too.
 *
 * Limits. A layer timer cannot be given to any other libuv call that takes
 * a handle. Those that dispatch on the handle's type (uv_fileno,
 * uv_send_buffer_size, uv_recv_buffer_size) return libuv's error for it.
 * uv_print_all_handles and uv_print_active_handles list libuv's handles
 * only. A switch with both case UV_TIMER and case UV_HANDLE fails to
 * compile.
 *
 * The README lists every difference between the layer's timers and
 * libuv's.
 */
#ifndef TIMERWHEEL_UV_PORT_H
#define TIMERWHEEL_UV_PORT_H

#include <stddef.h>
#include <uv.h>

#include <timerwheel/uv_timer.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tw_uv_handle_close - uv_close() for any handle, the layer's timers too
 * @h:  a handle of libuv's, or a timer of the layer's
 * @cb: called with @h once its memory may be released, or NULL
 *
 * A layer timer is closed as by tw_uv_timer_close(). @cb is given it as a
 * uv_handle_t. Every other handle goes to uv_close().
 */
TW_API void tw_uv_handle_close(uv_handle_t *h, uv_close_cb cb);

/**
 * tw_uv_handle_is_active - uv_is_active() for any handle
 * @h: a handle of libuv's, or a timer of the layer's
 *
 * Return: tw_uv_timer_is_active() for a layer timer, else uv_is_active().
 */
TW_API int tw_uv_handle_is_active(const uv_handle_t *h);

/**
 * tw_uv_handle_is_closing - uv_is_closing() for any handle
 * @h: a handle of libuv's, or a timer of the layer's
 *
 * Return: tw_uv_timer_is_closing() for a layer timer, else uv_is_closing().
 */
TW_API int tw_uv_handle_is_closing(const uv_handle_t *h);

/**
 * tw_uv_handle_ref - uv_ref() for any handle
 * @h: a handle of libuv's, or a timer of the layer's (tw_uv_timer_ref())
 */
TW_API void tw_uv_handle_ref(uv_handle_t *h);

/**
 * tw_uv_handle_unref - uv_unref() for any handle
 * @h: a handle of libuv's, or a timer of the layer's (tw_uv_timer_unref())
 */
TW_API void tw_uv_handle_unref(uv_handle_t *h);

/**
 * tw_uv_handle_has_ref - uv_has_ref() for any handle
 * @h: a handle of libuv's, or a timer of the layer's
 *
 * Return: tw_uv_timer_has_ref() for a layer timer, else uv_has_ref().
 */
TW_API int tw_uv_handle_has_ref(const uv_handle_t *h);

/**
 * tw_uv_walk - uv_walk() that shows the layer's timers, not the backends'
 * @loop: the loop
 * @cb:   called for each handle, as by uv_walk()
 * @arg:  passed to @cb
 *
 * Calls @cb on each handle uv_walk() shows, except the backends' own
 * handles (struct tw_uv). Then calls it on each timer of the loop's wheel
 * (tw_uv_timer_init()): stopped, active or closing, as uv_walk() shows a
 * uv_timer_t. Timers of tw_uv_timer_init_on() are not shown. A closed
 * timer is shown until its close callback, unless it was the loop's last
 * timer: the wheel goes with that one. @cb may close any handle. If the
 * memory to list the layer's timers runs out, they are not shown.
 */
TW_API void tw_uv_walk(uv_loop_t *loop, uv_walk_cb cb, void *arg);

/**
 * tw_uv_handle_type_name - uv_handle_type_name() that knows TW_UV_TIMER
 * @type: a handle type
 *
 * Return: "timer" for TW_UV_TIMER (UV_HANDLE), else uv_handle_type_name().
 */
TW_API const char *tw_uv_handle_type_name(uv_handle_type type);

/**
 * tw_uv_handle_size - uv_handle_size() that knows TW_UV_TIMER
 * @type: a handle type
 *
 * Return: sizeof(struct tw_uv_timer) for TW_UV_TIMER (UV_HANDLE), else
 * uv_handle_size().
 */
TW_API size_t tw_uv_handle_size(uv_handle_type type);

#ifdef __cplusplus
}
#endif

/* The program's spelling from here on (not in the library, which
 * implements the functions above with libuv's own). */
#ifndef TW__UV_PORT_IMPL
#define uv_timer_t tw_uv_timer_t
#define uv_timer_cb tw_uv_timer_cb
#define uv_timer_init tw_uv_timer_init
#define uv_timer_start tw_uv_timer_start
#define uv_timer_stop tw_uv_timer_stop
#define uv_timer_again tw_uv_timer_again
#define uv_timer_set_repeat tw_uv_timer_set_repeat
#define uv_timer_get_repeat tw_uv_timer_get_repeat
#define uv_timer_get_due_in tw_uv_timer_get_due_in
#define UV_TIMER TW_UV_TIMER
#define uv_close tw_uv_handle_close
#define uv_is_active tw_uv_handle_is_active
#define uv_is_closing tw_uv_handle_is_closing
#define uv_ref tw_uv_handle_ref
#define uv_unref tw_uv_handle_unref
#define uv_has_ref tw_uv_handle_has_ref
#define uv_walk tw_uv_walk
#define uv_handle_type_name tw_uv_handle_type_name
#define uv_handle_size tw_uv_handle_size
#endif

#endif /* TIMERWHEEL_UV_PORT_H */
