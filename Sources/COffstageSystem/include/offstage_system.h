// C wrappers for what the Glibc module does not import or cannot express safely in Swift:
// variadic prctl, pidfd, waitid's siginfo union, the packed epoll_event, and a fork+exec whose child
// joins its cgroups and resets every signal before exec.
//
// Every function returns -1 and leaves errno set on failure unless it says otherwise.

#ifndef OFFSTAGE_SYSTEM_H
#define OFFSTAGE_SYSTEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Process supervision

/// Makes the calling process adopt (and so be able to reap) its orphaned descendants.
int offstage_prctl_set_child_subreaper(void);

/// Installs handlers for SIGTERM and SIGINT that add 1 to `eventfd` (async-signal-safe: one write), whichever thread
/// the kernel delivers them to. Returns 0, or -1 with errno set. A process calls it once.
int offstage_signal_eventfd_on_shutdown(int eventfd);

// Makes stdout line-buffered and stderr unbuffered, so an app's output reaches its log file line by line even
// when the app is killed (the C `stdout` global cannot be named from Swift 6).
void offstage_line_buffer_output(void);

/// A pidfd for `pid`, close-on-exec.
int offstage_pidfd_open(pid_t pid);

/// What waitid reported, decoded from siginfo_t.
typedef struct offstage_wait_result {
    /// The reaped (or waitable) process; 0 when WNOHANG found nothing.
    int32_t pid;
    /// CLD_EXITED, CLD_KILLED, CLD_DUMPED, ...
    int32_t code;
    /// The exit code for CLD_EXITED, else the signal number.
    int32_t status;
} offstage_wait_result;

/// Option bits for the waitid wrappers, as constants Swift can import.
extern const int OFFSTAGE_WEXITED;
extern const int OFFSTAGE_WNOHANG;
extern const int OFFSTAGE_WNOWAIT;

/// waitid(P_PIDFD, fd, ...): reaps the child behind a pidfd. ECHILD when it is not our child.
int offstage_waitid_pidfd(int pidfd, int options, offstage_wait_result *result);
/// waitid(P_PID, pid, ...).
int offstage_waitid_pid(pid_t pid, int options, offstage_wait_result *result);
/// waitid(P_ALL, 0, ...).
int offstage_waitid_all(int options, offstage_wait_result *result);

/// 1 when the wait result is a normal exit.
int offstage_wait_result_exited(const offstage_wait_result *result);
/// 1 when the wait result is a death by signal (with or without core dump).
int offstage_wait_result_signaled(const offstage_wait_result *result);

/// WIFEXITED for a waitpid status word.
int offstage_status_exited(int status);
/// WEXITSTATUS for a waitpid status word.
int offstage_status_exit_code(int status);
/// WIFSIGNALED for a waitpid status word.
int offstage_status_signaled(int status);
/// WTERMSIG for a waitpid status word.
int offstage_status_signal(int status);

/// The kernel id of the calling thread (for /proc/self/task/TID).
pid_t offstage_gettid(void);

/// Names the calling thread (at most 15 bytes), as `ps -L` and /proc/self/task/TID/comm show it.
int offstage_set_thread_name(const char *name);

/// Sets the nice value of the calling thread alone (Linux keeps one per thread): 10 gives it about a tenth of the
/// CPU of a normal thread when they compete. Returns 0 or an errno.
int offstage_set_thread_nice(int nice);

/// Forks a child that exits at once; used to wake a thread blocked in waitid(P_ALL). Returns its pid.
pid_t offstage_fork_exiting_child(void);

// MARK: - epoll and eventfd

/// epoll_create1(EPOLL_CLOEXEC).
int offstage_epoll_create(void);
/// Adds `fd` for readability; `token` comes back from offstage_epoll_wait.
int offstage_epoll_add(int epfd, int fd, uint64_t token);
/// Removes `fd`.
int offstage_epoll_remove(int epfd, int fd);
/// Waits for up to `capacity` ready tokens; `timeout_ms` -1 waits forever. Returns the count.
int offstage_epoll_wait(int epfd, uint64_t *tokens, int capacity, int timeout_ms);
/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK).
int offstage_eventfd(void);

/// Waits up to `timeout_ns` for POLLPRI on `fd` (a kernfs file such as cgroup.events signals changes that way),
/// with sub-millisecond resolution. Returns the revents (0 on timeout or EINTR).
int offstage_poll_priority(int fd, int64_t timeout_ns);

// MARK: - Kernel change notifications (device conditions)

/// A netlink socket receiving the kernel's device events (NETLINK_KOBJECT_UEVENT, multicast group 1: the
/// kernel's own messages, not udev's re-broadcasts), bound, close-on-exec and non-blocking.
int offstage_uevent_socket(void);

/// A NETLINK_ROUTE socket subscribed to link and address changes (RTMGRP_LINK, RTMGRP_IPV4_IFADDR and
/// RTMGRP_IPV6_IFADDR), bound, close-on-exec and non-blocking.
int offstage_route_change_socket(void);

// MARK: - Clock and time zone changes (system events)

/// A timerfd on CLOCK_REALTIME armed for the far future with TFD_TIMER_CANCEL_ON_SET, close-on-exec and
/// non-blocking: it becomes readable, and its read fails with ECANCELED, when the clock is set.
int offstage_clock_change_fd(void);
/// Arms `fd` again after a change was read. Returns 0.
int offstage_clock_change_rearm(int fd);
/// 1 when a read of `fd` says the clock was set (ECANCELED), 0 when nothing happened.
int offstage_clock_change_read(int fd);
/// An inotify descriptor (close-on-exec, non-blocking) watching the directory `directory` for files created, moved
/// in, written, removed or changed in it.
int offstage_inotify_directory(const char *directory);
/// Reads every pending event of an inotify descriptor; returns 1 when one concerns a file named `name` or `other`,
/// 0 when none does, -1 on error.
int offstage_inotify_touched(int fd, const char *name, const char *other);

// MARK: - Accessory paths (SPEC MODE-4)

/// An inotify descriptor, close-on-exec and non-blocking, watching nothing yet.
int offstage_inotify_open(void);
/// Watches the directory `directory` for entries created, removed, moved in or out, or changed (a device node, a
/// udev link, a socket), and for the directory itself going away. Returns the watch descriptor, or -1 with errno.
int offstage_inotify_watch_directory(int fd, const char *directory);
/// Stops the watch `watch`. Returns 0, or -1 with errno (EINVAL once the kernel dropped it).
int offstage_inotify_unwatch(int fd, int watch);
/// Reads every pending event; stores up to `capacity` distinct watch descriptors they concern in `watches`, and sets
/// `*overflowed` to 1 when the kernel dropped events (every watch must be looked at again). Returns how many were
/// stored, or -1 on error.
int offstage_inotify_read_watches(int fd, int *watches, int capacity, int *overflowed);

// MARK: - File-descriptor passing

/// sendmsg of `length` bytes with `fd` attached as one SCM_RIGHTS descriptor (none when `fd` is negative), with
/// MSG_NOSIGNAL so a peer that has gone yields EPIPE instead of killing the process. Retries after EINTR. Returns
/// the bytes sent (a stream socket may take fewer than `length`: send the rest without the fd).
ssize_t offstage_send_with_fd(int socket, const void *bytes, size_t length, int fd);

/// recvmsg of up to `capacity` bytes, receiving at most one descriptor, close-on-exec (MSG_CMSG_CLOEXEC), into
/// `*fd_out` (-1 when none came). Descriptors beyond the first are closed at once, so none leak. Retries after
/// EINTR. Returns the bytes received (0 at end of stream). When the kernel truncated the control data (more
/// descriptors than fit), every descriptor that did arrive is closed and it returns -1 with errno EMSGSIZE.
ssize_t offstage_recv_with_fd(int socket, void *buffer, size_t capacity, int *fd_out);

/// accept4(SOCK_CLOEXEC | SOCK_NONBLOCK), which Glibc declares only under _GNU_SOURCE: the accepted connection is
/// never inherited by an app the daemon spawns meanwhile. Retries after EINTR.
int offstage_accept_cloexec(int listener);

/// epoll event bits, as constants Swift can import (Glibc's are an enum type of its own).
extern const uint32_t OFFSTAGE_EPOLLIN;
extern const uint32_t OFFSTAGE_EPOLLRDHUP;
extern const uint32_t OFFSTAGE_EPOLLHUP;
extern const uint32_t OFFSTAGE_EPOLLERR;
extern const uint32_t OFFSTAGE_EPOLLONESHOT;

/// epoll_ctl(EPOLL_CTL_ADD) of `fd` for `events` (any of the OFFSTAGE_EPOLL* bits); `token` comes back from
/// offstage_epoll_wait_events.
int offstage_epoll_add_events(int epfd, int fd, uint32_t events, uint64_t token);
/// epoll_ctl(EPOLL_CTL_MOD): replaces the events and token of `fd` (0 events disables it but keeps it registered;
/// this is also how an EPOLLONESHOT registration is re-armed).
int offstage_epoll_modify_events(int epfd, int fd, uint32_t events, uint64_t token);
/// Waits for up to `capacity` ready registrations (at most 64 per call); fills `tokens` and their `events`.
/// `timeout_ms` -1 waits forever. Returns the count, or -1 with errno (EINTR included).
int offstage_epoll_wait_events(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms);

// MARK: - Spawning

/// Where a spawn failed; the child reports the step and errno through a close-on-exec pipe.
typedef enum offstage_spawn_step {
    OFFSTAGE_SPAWN_STEP_NONE = 0,
    OFFSTAGE_SPAWN_STEP_PIPE = 1,
    OFFSTAGE_SPAWN_STEP_FORK = 2,
    OFFSTAGE_SPAWN_STEP_JOIN_CGROUP = 3,
    OFFSTAGE_SPAWN_STEP_PROCESS_GROUP = 4,
    OFFSTAGE_SPAWN_STEP_STDIN = 5,
    OFFSTAGE_SPAWN_STEP_OUTPUT = 6,
    OFFSTAGE_SPAWN_STEP_CHDIR = 7,
    OFFSTAGE_SPAWN_STEP_EXEC = 8,
} offstage_spawn_step;

/// Why a spawn failed.
typedef struct offstage_spawn_failure {
    /// An offstage_spawn_step.
    int32_t step;
    /// The errno of that step.
    int32_t error;
    /// The child that failed (already reaped), or 0 when no child was created.
    int32_t child;
} offstage_spawn_failure;

/// Forks and execs `path` with `argv` and `envp` (both NULL-terminated).
///
/// In the child, before exec and with only async-signal-safe calls: every signal disposition back to
/// SIG_DFL and an empty signal mask (ignored signals survive exec), "0" written to each fd of
/// `cgroup_procs_fds` (already-open cgroup.procs files, so the child is in its cgroups before it runs a
/// single instruction of the new program), its own process group, stdin from /dev/null, stdout and stderr
/// to `output_fd` (/dev/null when negative), chdir to `directory` (unless NULL), every fd >= 3
/// close-on-exec, then execve.
///
/// Returns 0 and the pid in `*pid`; or -1 with `*failure` filled (a failed child is reaped before return).
int offstage_spawn(
    const char *path,
    char *const argv[],
    char *const envp[],
    const char *directory,
    int output_fd,
    const int *cgroup_procs_fds,
    int cgroup_procs_fd_count,
    pid_t *pid,
    offstage_spawn_failure *failure
);

// MARK: - Pseudo-terminals

/// A new pseudo-terminal: returns its master (read-write, not a controlling terminal, close-on-exec) and writes the
/// slave's path (/dev/pts/N) into `slave_path`. For tests and examples that stand in for a serial accessory
/// (posix_openpt, grantpt, unlockpt and ptsname_r are X/Open functions the Glibc module does not import).
int offstage_open_pty(char *slave_path, size_t capacity);

// MARK: - The heap

/// Bytes of the C heap in use: the arenas' allocated chunks and the separately mapped ones, as mallinfo2 counts them
/// (malloc.h, which the Glibc module does not import). For tests that measure what a structure costs.
size_t offstage_heap_in_use(void);

/// Gives the C heap's free memory back to the kernel, in every arena (malloc_trim(0)): after a burst of short-lived
/// allocations, such as reading a large store back, the pages freed between what stays are no longer resident.
void offstage_heap_trim(void);

/// At most `arenas` malloc arenas (mallopt M_ARENA_MAX; glibc's default is eight per core). Each arena keeps its own
/// freed memory, so a daemon whose threads allocate briefly holds less with few. Returns 0 if glibc refused.
int offstage_heap_limit_arenas(int arenas);

// MARK: - The main dispatch queue, run by a loop of our own

// libdispatch's hooks for a run loop that owns the main thread (Foundation's run loop uses the same): the main
// queue's wake-up descriptor (an eventfd on Linux, readable when work was queued) and the call that runs the work
// queued so far on the calling (main) thread. Declared here only: referencing them links libdispatch, which
// every target that imports Dispatch links anyway.
int _dispatch_get_main_queue_handle_4CF(void);
void _dispatch_main_queue_callback_4CF(void *message);

#ifdef __cplusplus
}
#endif

#endif
