/* pwd.h for airlock's PHP wasm32-wasi build: no user database in the
 * sandbox; lookups find nothing (../wasi_compat.c). */
#ifndef AIRLOCK_WASI_PWD_H
#define AIRLOCK_WASI_PWD_H
#include <sys/types.h>
struct passwd {
  char* pw_name;
  char* pw_passwd;
  uid_t pw_uid;
  gid_t pw_gid;
  char* pw_gecos;
  char* pw_dir;
  char* pw_shell;
};
#ifdef __cplusplus
extern "C" {
#endif
struct passwd* getpwnam(const char*);
struct passwd* getpwuid(uid_t);
#ifdef __cplusplus
}
#endif
#endif
