// Clocks and scheduling: realtime, monotonic (never backwards),
// clock_getres, nanosleep / clock_nanosleep / poll timeouts (all
// poll_oneoff clock subscriptions), sched_yield.
#include <poll.h>
#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

static long long now_ns(clockid_t id) {
  struct timespec t;
  if (clock_gettime(id, &t) != 0) return -1;
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(void) {
  struct timespec t;
  CHECK("realtime", clock_gettime(CLOCK_REALTIME, &t) == 0 && t.tv_sec > 1577836800 /* 2020 */ &&
                        t.tv_nsec >= 0 && t.tv_nsec < 1000000000);
  time_t secs = time(NULL);
  CHECK("time.matches.realtime", secs >= t.tv_sec && secs - t.tv_sec < 5);
  struct timeval tv;
  CHECK("gettimeofday", gettimeofday(&tv, NULL) == 0 && tv.tv_sec >= t.tv_sec && tv.tv_sec - t.tv_sec < 5);

  long long prev = now_ns(CLOCK_MONOTONIC);
  int backwards = 0;
  for (int i = 0; i < 10000; ++i) {
    long long cur = now_ns(CLOCK_MONOTONIC);
    if (cur < prev) ++backwards;
    prev = cur;
  }
  CHECK("monotonic.nondecreasing", prev > 0 && backwards == 0);

  struct timespec res;
  CHECK("getres.realtime", clock_getres(CLOCK_REALTIME, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0 &&
                               res.tv_nsec <= 1000000);
  CHECK("getres.monotonic", clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0 &&
                                res.tv_nsec <= 1000000);
  CHECK_ERRNO("gettime.bad.clock", clock_gettime((clockid_t)(long)1234, &t), EINVAL);

  // Sleeping: each is a poll_oneoff clock subscription.
  long long start = now_ns(CLOCK_MONOTONIC);
  struct timespec req = {0, 50 * 1000000L};
  CHECK("nanosleep", nanosleep(&req, NULL) == 0);
  long long slept = now_ns(CLOCK_MONOTONIC) - start;
  CHECK("nanosleep.duration", slept >= 50 * 1000000LL && slept < 5000 * 1000000LL);

  start = now_ns(CLOCK_MONOTONIC);
  CHECK("usleep", usleep(20000) == 0 && now_ns(CLOCK_MONOTONIC) - start >= 20 * 1000000LL);

  start = now_ns(CLOCK_MONOTONIC);
  struct timespec until = {(time_t)((start + 30 * 1000000LL) / 1000000000LL),
                           (long)((start + 30 * 1000000LL) % 1000000000LL)};
  CHECK("clock_nanosleep.abstime", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == 0 &&
                                       now_ns(CLOCK_MONOTONIC) >= start + 30 * 1000000LL);
  start = now_ns(CLOCK_MONOTONIC);
  CHECK("clock_nanosleep.past", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == 0 &&
                                    now_ns(CLOCK_MONOTONIC) - start < 1000 * 1000000LL);

  start = now_ns(CLOCK_MONOTONIC);
  CHECK("poll.timeout.only", poll(NULL, 0, 30) == 0 && now_ns(CLOCK_MONOTONIC) - start >= 30 * 1000000LL);

  req.tv_nsec = 0;
  CHECK("nanosleep.zero", nanosleep(&req, NULL) == 0);
  req.tv_nsec = 2000000000L;
  CHECK_ERRNO("nanosleep.invalid", nanosleep(&req, NULL), EINVAL);

  CHECK("sched_yield", sched_yield() == 0);
  return 0;
}
