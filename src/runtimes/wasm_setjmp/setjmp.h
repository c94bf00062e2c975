/* setjmp.h for airlock's WASM tier (wasm32-wasi, clang-16 with
 * -mexception-handling -mllvm -wasm-enable-sjlj). LLVM lowers calls to
 * setjmp and longjmp by name; the runtime half is setjmp.c (in the runner's
 * kit: ../setjmp.c, compiled into ../lib/libairlock_setjmp.a; PHP's build,
 * scripts/wasm/build_php.sh, links it too). Word 0 of a jmp_buf holds the
 * id saveSetjmp gives the call. */
#ifndef AIRLOCK_WASM_SETJMP_H
#define AIRLOCK_WASM_SETJMP_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { unsigned long __id; unsigned long __spare[7]; } jmp_buf[1];
typedef jmp_buf sigjmp_buf;

int setjmp(jmp_buf) __attribute__((returns_twice));
__attribute__((noreturn)) void longjmp(jmp_buf, int);

#define _setjmp(env) setjmp(env)
#define _longjmp(env, val) longjmp(env, val)
#define sigsetjmp(env, savesigs) setjmp(env)
#define siglongjmp(env, val) longjmp(env, val)

#ifdef __cplusplus
}
#endif
#endif
