/* grp.h for airlock's PHP wasm32-wasi build: no group database; lookups
 * find nothing (../wasi_compat.c). */
#ifndef AIRLOCK_WASI_GRP_H
#define AIRLOCK_WASI_GRP_H
#include <sys/types.h>
struct group {
  char* gr_name;
  char* gr_passwd;
  gid_t gr_gid;
  char** gr_mem;
};
#ifdef __cplusplus
extern "C" {
#endif
struct group* getgrnam(const char*);
struct group* getgrgid(gid_t);
#ifdef __cplusplus
}
#endif
#endif
