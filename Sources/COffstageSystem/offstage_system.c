#define _GNU_SOURCE
#include "offstage_system.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

// Older headers lack these; the values are the kernel ABI.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#define OFFSTAGE_P_PIDFD 3

const int OFFSTAGE_WEXITED = WEXITED;
const int OFFSTAGE_WNOHANG = WNOHANG;
const int OFFSTAGE_WNOWAIT = WNOWAIT;

int offstage_prctl_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
}

static int offstage_shutdown_eventfd = -1;

static void offstage_shutdown_signalled(int signal_number) {
    (void)signal_number;
    int saved = errno;
    uint64_t one = 1;
    ssize_t written = write(offstage_shutdown_eventfd, &one, sizeof one);
    (void)written;
    errno = saved;
}

int offstage_signal_eventfd_on_shutdown(int eventfd) {
    offstage_shutdown_eventfd = eventfd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = offstage_shutdown_signalled;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    if (sigaction(SIGINT, &action, NULL) != 0) return -1;
    return 0;
}

int offstage_pidfd_open(pid_t pid) {
    // A pidfd is always close-on-exec.
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int wait_decoded(idtype_t type, id_t id, int options, offstage_wait_result *result) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    do {
        rc = waitid(type, id, &info, options);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        return -1;
    }
    result->pid = info.si_pid;
    result->code = info.si_code;
    result->status = info.si_status;
    return 0;
}

int offstage_waitid_pidfd(int pidfd, int options, offstage_wait_result *result) {
    return wait_decoded((idtype_t)OFFSTAGE_P_PIDFD, (id_t)pidfd, options, result);
}

int offstage_waitid_pid(pid_t pid, int options, offstage_wait_result *result) {
    return wait_decoded(P_PID, (id_t)pid, options, result);
}

int offstage_waitid_all(int options, offstage_wait_result *result) {
    return wait_decoded(P_ALL, 0, options, result);
}

int offstage_wait_result_exited(const offstage_wait_result *result) {
    return result->code == CLD_EXITED;
}

int offstage_wait_result_signaled(const offstage_wait_result *result) {
    return result->code == CLD_KILLED || result->code == CLD_DUMPED;
}

int offstage_status_exited(int status) { return WIFEXITED(status); }
int offstage_status_exit_code(int status) { return WEXITSTATUS(status); }
int offstage_status_signaled(int status) { return WIFSIGNALED(status); }
int offstage_status_signal(int status) { return WTERMSIG(status); }

pid_t offstage_gettid(void) {
    return (pid_t)syscall(SYS_gettid);
}

int offstage_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int offstage_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) == 0 ? 0 : errno;
}

pid_t offstage_fork_exiting_child(void) {
    // Signals blocked so no handler of the parent runs in the child before it exits.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t pid = fork();
    if (pid == 0) {
        _exit(0);
    }
    int fork_error = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    errno = fork_error;
    return pid;
}

int offstage_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int offstage_epoll_add(int epfd, int fd, uint64_t token) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN;
    event.data.u64 = token;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int offstage_epoll_remove(int epfd, int fd) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &event);
}

int offstage_epoll_wait(int epfd, uint64_t *tokens, int capacity, int timeout_ms) {
    struct epoll_event events[64];
    if (capacity > 64) {
        capacity = 64;
    }
    int count = epoll_wait(epfd, events, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        tokens[i] = events[i].data.u64;
    }
    return count;
}

int offstage_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int offstage_poll_priority(int fd, int64_t timeout_ns) {
    struct pollfd entry = {fd, POLLPRI, 0};
    struct timespec timeout = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
    int count = ppoll(&entry, 1, &timeout, NULL);
    if (count < 0) {
        return errno == EINTR ? 0 : -1;
    }
    return count == 0 ? 0 : entry.revents;
}

// MARK: - Kernel change notifications (device conditions)

static int netlink_socket(int protocol, uint32_t groups) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    // nl_pid 0: the kernel assigns a unique port id, so several watchers can live in one process.
    address.nl_pid = 0;
    address.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int bind_error = errno;
        close(fd);
        errno = bind_error;
        return -1;
    }
    return fd;
}

int offstage_uevent_socket(void) {
    // Group 1 carries the kernel's uevents; group 2 is where udev re-broadcasts them after processing.
    return netlink_socket(NETLINK_KOBJECT_UEVENT, 1);
}

int offstage_route_change_socket(void) {
    return netlink_socket(NETLINK_ROUTE, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR);
}

// MARK: - File-descriptor passing

ssize_t offstage_send_with_fd(int socket, const void *bytes, size_t length, int fd) {
    struct iovec vector = {(void *)bytes, length};
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    // A union keeps the control buffer aligned as struct cmsghdr requires.
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    if (fd >= 0) {
        message.msg_control = control.bytes;
        message.msg_controllen = sizeof control.bytes;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

// Room for a few descriptors: a client that sends two or three by mistake has the extra ones closed rather than
// the message refused; one that sends more is refused (MSG_CTRUNC).
#define OFFSTAGE_RECEIVED_FD_ROOM 8

ssize_t offstage_recv_with_fd(int socket, void *buffer, size_t capacity, int *fd_out) {
    *fd_out = -1;
    struct iovec vector = {buffer, capacity};
    struct msghdr message;
    union {
        char bytes[CMSG_SPACE(sizeof(int) * OFFSTAGE_RECEIVED_FD_ROOM)];
        struct cmsghdr align;
    } control;
    ssize_t received;
    do {
        memset(&message, 0, sizeof message);
        memset(&control, 0, sizeof control);
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control.bytes;
        message.msg_controllen = sizeof control.bytes;
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) {
        return -1;
    }
    int kept = -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const unsigned char *data = CMSG_DATA(header);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, data + i * sizeof(int), sizeof(int));
            if (kept < 0) {
                kept = fd;
            } else {
                close(fd);
            }
        }
    }
    if (message.msg_flags & MSG_CTRUNC) {
        if (kept >= 0) {
            close(kept);
        }
        errno = EMSGSIZE;
        return -1;
    }
    *fd_out = kept;
    return received;
}

int offstage_accept_cloexec(int listener) {
    int fd;
    do {
        fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

const uint32_t OFFSTAGE_EPOLLIN = EPOLLIN;
const uint32_t OFFSTAGE_EPOLLRDHUP = EPOLLRDHUP;
const uint32_t OFFSTAGE_EPOLLHUP = EPOLLHUP;
const uint32_t OFFSTAGE_EPOLLERR = EPOLLERR;
const uint32_t OFFSTAGE_EPOLLONESHOT = EPOLLONESHOT;

static int epoll_control(int epfd, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, operation, fd, &event);
}

int offstage_epoll_add_events(int epfd, int fd, uint32_t events, uint64_t token) {
    return epoll_control(epfd, EPOLL_CTL_ADD, fd, events, token);
}

int offstage_epoll_modify_events(int epfd, int fd, uint32_t events, uint64_t token) {
    return epoll_control(epfd, EPOLL_CTL_MOD, fd, events, token);
}

int offstage_epoll_wait_events(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[64];
    if (capacity > 64) {
        capacity = 64;
    }
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

// MARK: - Spawning

// Moves an fd the child still needs out of 0...2, so the dup2 calls onto stdio cannot overwrite it.
static int above_stdio(int fd) {
    if (fd < 0 || fd > 2) {
        return fd;
    }
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

// Everything below runs in the forked child of a multi-threaded process: async-signal-safe calls only,
// no malloc, no locks, no stdio.
static void child_fail(int report_fd, int step, int error) {
    offstage_spawn_failure failure = {step, error, 0};
    ssize_t written;
    do {
        written = write(report_fd, &failure, sizeof failure);
    } while (written < 0 && errno == EINTR);
    _exit(127);
}

static void reset_signal_raw(int sig) {
#if defined(__x86_64__) || defined(__aarch64__)
    // The kernel's struct sigaction on these architectures; no restorer is needed for SIG_DFL.
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } action = {SIG_DFL, 0, NULL, 0};
    syscall(SYS_rt_sigaction, sig, &action, NULL, sizeof action.mask);
#else
    (void)sig;
#endif
}

static void child_mark_fds_cloexec(int fd_limit) {
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) {
        return;
    }
    // Kernels before 5.11 lack CLOSE_RANGE_CLOEXEC: walk up to the descriptor limit instead.
    for (int fd = 3; fd < fd_limit; fd++) {
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC)) {
            fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
    }
}

static void child_run(
    int report_fd,
    const char *path,
    char *const argv[],
    char *const envp[],
    const char *directory,
    int output_fd,
    const int *cgroup_procs_fds,
    int cgroup_procs_fd_count,
    int fd_limit
) {
    // The parent blocked every signal around fork, so no handler of the parent can run here. Ignored
    // dispositions survive exec, so put every one back to the default. SIGKILL and SIGSTOP refuse, which
    // is fine; glibc refuses its internal signals 32 and 33 too, but a launcher built with posix_spawn can
    // leave those ignored, so they are reset with the raw system call.
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sigaction(sig, &default_action, NULL) < 0 && sig != SIGKILL && sig != SIGSTOP) {
            reset_signal_raw(sig);
        }
    }

    // Join the cgroups first: anything the program does after exec, including its own forks, happens
    // inside them.
    for (int i = 0; i < cgroup_procs_fd_count; i++) {
        ssize_t written;
        do {
            written = write(cgroup_procs_fds[i], "0", 1);
        } while (written < 0 && errno == EINTR);
        if (written < 0) {
            child_fail(report_fd, OFFSTAGE_SPAWN_STEP_JOIN_CGROUP, errno);
        }
    }

    // Its own process group, so a signal to -pid reaches the whole app and nothing of the daemon.
    if (setpgid(0, 0) < 0) {
        child_fail(report_fd, OFFSTAGE_SPAWN_STEP_PROCESS_GROUP, errno);
    }

    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0) {
        child_fail(report_fd, OFFSTAGE_SPAWN_STEP_STDIN, errno);
    }
    int out = output_fd >= 0 ? output_fd : null_fd;
    out = above_stdio(out);
    if (out < 0) {
        child_fail(report_fd, OFFSTAGE_SPAWN_STEP_OUTPUT, errno);
    }
    if (dup2(null_fd, 0) < 0) {
        child_fail(report_fd, OFFSTAGE_SPAWN_STEP_STDIN, errno);
    }
    if (dup2(out, 1) < 0 || dup2(out, 2) < 0) {
        child_fail(report_fd, OFFSTAGE_SPAWN_STEP_OUTPUT, errno);
    }
    // dup2 onto itself (when the parent had stdio closed) keeps close-on-exec: clear it explicitly.
    for (int fd = 0; fd <= 2; fd++) {
        fcntl(fd, F_SETFD, 0);
    }

    if (directory != NULL && chdir(directory) < 0) {
        child_fail(report_fd, OFFSTAGE_SPAWN_STEP_CHDIR, errno);
    }

    // Only stdio may cross into the app; the report pipe is already close-on-exec.
    child_mark_fds_cloexec(fd_limit);

    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);

    execve(path, argv, envp);
    child_fail(report_fd, OFFSTAGE_SPAWN_STEP_EXEC, errno);
}

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
) {
    failure->step = OFFSTAGE_SPAWN_STEP_NONE;
    failure->error = 0;
    failure->child = 0;

    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0) {
        failure->step = OFFSTAGE_SPAWN_STEP_PIPE;
        failure->error = errno;
        return -1;
    }
    // The child writes its report after the dup2 calls onto 0...2.
    int report_write = above_stdio(report[1]);
    if (report_write != report[1]) {
        close(report[1]);
    }
    if (report_write < 0) {
        failure->step = OFFSTAGE_SPAWN_STEP_PIPE;
        failure->error = errno;
        close(report[0]);
        return -1;
    }

    // Computed here because getrlimit is not on the async-signal-safe list.
    struct rlimit limit;
    int fd_limit = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 65536) {
        fd_limit = (int)limit.rlim_cur;
    }

    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t child = fork();
    if (child == 0) {
        child_run(report_write, path, argv, envp, directory, output_fd, cgroup_procs_fds, cgroup_procs_fd_count,
                  fd_limit);
    }
    int fork_error = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(report_write);

    if (child < 0) {
        close(report[0]);
        failure->step = OFFSTAGE_SPAWN_STEP_FORK;
        failure->error = fork_error;
        return -1;
    }

    // EOF means exec succeeded (the pipe closed on exec); a record means the child failed and exited.
    offstage_spawn_failure reported;
    ssize_t got;
    do {
        got = read(report[0], &reported, sizeof reported);
    } while (got < 0 && errno == EINTR);
    close(report[0]);

    if (got == (ssize_t)sizeof reported) {
        int rc;
        do {
            rc = waitpid(child, NULL, 0);
        } while (rc < 0 && errno == EINTR);
        // ECHILD here means a reap-everything waiter got it first; the child is gone either way.
        failure->step = reported.step;
        failure->error = reported.error;
        failure->child = child;
        return -1;
    }
    *pid = child;
    return 0;
}

void offstage_line_buffer_output(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stderr, NULL, _IONBF, 0);
}

// MARK: - Clock and time zone changes (system events)

static int offstage_arm_far_future(int fd) {
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = (time_t)1 << 40;  // never expires in practice: only a clock change wakes it
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

int offstage_clock_change_fd(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) return -1;
    if (offstage_arm_far_future(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int offstage_clock_change_rearm(int fd) { return offstage_arm_far_future(fd); }

int offstage_clock_change_read(int fd) {
    uint64_t expirations;
    ssize_t n = read(fd, &expirations, sizeof expirations);
    return (n < 0 && errno == ECANCELED) ? 1 : 0;
}

int offstage_inotify_directory(const char *directory) {
    int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0) return -1;
    uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB;
    if (inotify_add_watch(fd, directory, mask) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int offstage_inotify_open(void) { return inotify_init1(IN_CLOEXEC | IN_NONBLOCK); }

int offstage_inotify_watch_directory(int fd, const char *directory) {
    uint32_t mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF
        | IN_ONLYDIR;
    return inotify_add_watch(fd, directory, mask);
}

int offstage_inotify_unwatch(int fd, int watch) { return inotify_rm_watch(fd, watch); }

int offstage_inotify_read_watches(int fd, int *watches, int capacity, int *overflowed) {
    char buffer[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    int count = 0;
    *overflowed = 0;
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return (n < 0 && errno != EAGAIN) ? -1 : count;
        for (char *p = buffer; p < buffer + n;) {
            struct inotify_event *event = (struct inotify_event *)p;
            p += sizeof(struct inotify_event) + event->len;
            if (event->mask & IN_Q_OVERFLOW) {
                *overflowed = 1;
                continue;
            }
            int known = 0;
            for (int i = 0; i < count; i++) known |= watches[i] == event->wd;
            if (known) continue;
            if (count < capacity) watches[count++] = event->wd; else *overflowed = 1;
        }
    }
}

int offstage_inotify_touched(int fd, const char *name, const char *other) {
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int touched = 0;
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) return (n < 0 && errno != EAGAIN) ? -1 : touched;
        for (char *p = buffer; p < buffer + n;) {
            struct inotify_event *event = (struct inotify_event *)p;
            if (event->len > 0 && (strcmp(event->name, name) == 0 || strcmp(event->name, other) == 0)) touched = 1;
            p += sizeof(struct inotify_event) + event->len;
        }
    }
}

int offstage_open_pty(char *slave_path, size_t capacity) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    int named = -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || (named = ptsname_r(master, slave_path, capacity)) != 0) {
        // ptsname_r returns its error number instead of setting errno.
        int saved = named > 0 ? named : errno;
        close(master);
        errno = saved;
        return -1;
    }
    return master;
}

// MARK: - The heap

size_t offstage_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void offstage_heap_trim(void) {
    malloc_trim(0);
}

int offstage_heap_limit_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}
