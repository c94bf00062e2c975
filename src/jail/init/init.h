// airlock-init: PID 1 of every jail.
//
// Started by the supervisor inside fresh namespaces with the control channel
// on fd 3. Protocol (see jail/channel.h for framing):
//   supervisor -> init  {"type":"setup", ...FsSetup...}
//   init -> supervisor  {"type":"ready"} | {"type":"error","message":...}
//   supervisor -> init  {"type":"exec", ...ProgramSpec..., "files":[...],
//                        "output_globs":[...]}  + fds [stdin, stdout, stderr]
//   init -> supervisor  {"type":"exited","exit_code","signal","cpu_ms",
//                        "exec_error","files":[...]}
// (exec may repeat: a compile step, then the program). On channel EOF init
// kills everything and exits, which tears the whole jail down.
#ifndef AIRLOCK_JAIL_INIT_INIT_H_
#define AIRLOCK_JAIL_INIT_INIT_H_

namespace airlock::jail {

inline constexpr int kInitChannelFd = 3;

int InitMain(int channel_fd);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_INIT_INIT_H_
