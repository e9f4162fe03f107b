package espeak

import "syscall"

// lowerPriority sets process pid's nice value to the calling thread's plus
// incr (at most 19); incr 0 does nothing. Raising nice needs no privilege.
func lowerPriority(pid, incr int) error {
	if incr <= 0 {
		return nil
	}
	// The raw getpriority returns 20 - nice; who 0 is the calling thread.
	cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return err
	}
	return syscall.Setpriority(syscall.PRIO_PROCESS, pid, min(19, 20-cur+incr))
}
