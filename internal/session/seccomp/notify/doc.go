// Package notify is the supervisor's side of the session's syscall
// policy when it is installed with a listener (seccomp.InstallNotified):
// it answers every call the filter hands over with the errno the rule
// gives (seccomp.Matcher), the call never running, and reports each one
// answered, so that the status stream can say which syscall was refused
// and to whom.
//
// Guarantees:
//   - A notified call is always refused: the answer is the rule's errno
//     (EPERM when no rule matches, which the filter never hands over),
//     never SECCOMP_USER_NOTIF_FLAG_CONTINUE. When the reader stops or
//     the supervisor dies, the listener is closed and the kernel refuses
//     every further call with ENOSYS.
//   - One reader, on a thread of its own, answers each notification as
//     it comes; only the first of each syscall waits for /proc (the
//     caller's pid and command name, checked still valid before use).
//   - Its memory is bounded by the policy: it keeps one flag per syscall
//     name; counting is the status recorder's (bounded) business.
package notify
