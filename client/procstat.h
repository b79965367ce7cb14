/* procstat: what `collide-client load` reads of the machine around a run (issue 32, part 2):
 * pinning its own threads to one CPU (--pin) and a process's CPU time from /proc (--daemon-pid),
 * so a run can say how much of a core the daemon took for the players it carried. Linux only. */
#ifndef COLLIDE_CLIENT_PROCSTAT_H
#define COLLIDE_CLIENT_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pins the calling thread, and so every thread it starts afterwards (they inherit its mask), to
 * CPU cpu. False with the reason in why (no such CPU, not allowed by the cgroup). */
bool cc_pin_cpu(uint32_t cpu, char *why, size_t why_size);

/* The CPU time (user + system, in seconds) process pid has used so far, from fields 14 and 15 of
 * /proc/PID/stat (clock ticks, sysconf(_SC_CLK_TCK)). False when it cannot be read (gone, not
 * Linux) or does not parse. */
bool cc_proc_cpu_s(uint32_t pid, double *cpu_s);

/* The same from the text of a stat file (the parser alone, for the unit tests): the fields are
 * counted after the last ')', since the command name in parentheses may hold spaces and ')'. */
bool cc_proc_stat_cpu_ticks(const char *stat, uint64_t *utime, uint64_t *stime);

#endif
