package sphinx

import "syscall"

// lowerThreadPriority raises the calling OS thread's nice value by incr
// (Linux schedules threads, so this leaves the rest of the process alone),
// up to 19. Raising nice needs no privilege.
func lowerThreadPriority(incr int) error {
	tid := syscall.Gettid()
	// The raw getpriority returns 20 - nice.
	cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return err
	}
	return syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(19, 20-cur+incr))
}

// onMainThread reports whether the calling thread is the process's first.
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
