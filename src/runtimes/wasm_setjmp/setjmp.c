/* The runtime half of LLVM 16's WebAssembly setjmp/longjmp lowering,
 * for airlock's WASM tier. What the compiler emits:
 *  - a function that calls setjmp keeps a table of {id, label} pairs
 *    (malloc'd by the compiler's code with 4 entries and a terminator);
 *    each setjmp(env) becomes  table = saveSetjmp(env, label, table, size);
 *    size = getTempRet0();
 *  - each call there that may longjmp sits in a try whose catch of the C
 *    longjmp tag receives {env, val} and asks testSetjmp(id, table, size):
 *    a label means "one of this frame's setjmps: go on there with val",
 *    0 means "not ours": the table is freed and the jump goes on up
 *    through __wasm_longjmp(env, val);
 *  - longjmp(env, val) becomes __wasm_longjmp(env, val), which throws the
 *    C longjmp tag (tag 1 of __builtin_wasm_throw).
 * WASI preview1 programs have one thread, so plain statics suffice.
 * Valid C and C++ (the C++ tier compiles it as C++). */
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

struct airlock_sjlj_entry {
  uint32_t id; /* 0 ends the used part of a table */
  uint32_t label;
};

static uint32_t airlock_temp_ret0;
static uint32_t airlock_last_id;
static struct {
  void* env;
  int val;
} airlock_longjmp_payload; /* read by the catch at once */

uint32_t getTempRet0(void) { return airlock_temp_ret0; }
void setTempRet0(uint32_t value) { airlock_temp_ret0 = value; }

struct airlock_sjlj_entry* saveSetjmp(uint32_t* env, uint32_t label, struct airlock_sjlj_entry* table,
                                      uint32_t size) {
  uint32_t id = ++airlock_last_id;
  if (id == 0) id = airlock_last_id = 1;
  *env = id;
  for (uint32_t i = 0; i < size; ++i) {
    if (table[i].id == 0) {
      table[i].id = id;
      table[i].label = label;
      table[i + 1].id = 0; /* a table has size + 1 slots */
      airlock_temp_ret0 = size;
      return table;
    }
  }
  uint32_t grown_size = size * 2;
  struct airlock_sjlj_entry* grown =
      (struct airlock_sjlj_entry*)realloc(table, sizeof *grown * (grown_size + 1));
  if (grown == NULL) abort();
  grown[size].id = id;
  grown[size].label = label;
  grown[size + 1].id = 0;
  airlock_temp_ret0 = grown_size;
  return grown;
}

uint32_t testSetjmp(uint32_t id, const struct airlock_sjlj_entry* table, uint32_t size) {
  for (uint32_t i = 0; i < size && table[i].id != 0; ++i) {
    if (table[i].id == id) return table[i].label;
  }
  return 0;
}

__attribute__((noreturn)) void __wasm_longjmp(void* env, int val) {
  airlock_longjmp_payload.env = env;
  airlock_longjmp_payload.val = val == 0 ? 1 : val; /* longjmp(env, 0) returns 1 */
  __builtin_wasm_throw(1, &airlock_longjmp_payload);
}

#ifdef __cplusplus
}
#endif
