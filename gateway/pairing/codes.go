package pairing

import (
	"errors"
	"sync"
	"time"
)

// Code is one issued pairing code, kept by the digest of its text.
type Code struct {
	PairingID, Partner, EndUser, Device string
	// Expires ends the code's life; until Retain a late or repeated
	// exchange is told "expired" or "already used", not "unknown".
	Expires, Retain time.Time
}

// Claim is what an exchange found under a code's digest.
type Claim int

const (
	// Claimed: the code was live and is now used.
	Claimed Claim = iota
	// ClaimUnknown: no such code (never issued, replaced or withdrawn).
	ClaimUnknown
	// ClaimUsed: exchanged (or burnt) before.
	ClaimUsed
	// ClaimExpired: past Code.Expires.
	ClaimExpired
	// ClaimWrongDevice: presented for another device; it is burnt now.
	ClaimWrongDevice
)

// ErrTooManyCodes: the store holds Config.MaxCodes codes.
var ErrTooManyCodes = errors.New("pairing: too many pairing codes are waiting to be used")

// CodeStore keeps pairing codes. Issue and Claim are atomic, so that one
// store shared by the nodes of a cluster (RedisCodes) keeps every code
// single use wherever it is exchanged.
type CodeStore interface {
	// Issue keeps c under digest d as the only live code of its owner
	// (partner, end user, device): an unused code of the same owner is
	// dropped. It refuses with ErrTooManyCodes while max codes are kept.
	Issue(d [32]byte, c Code, now time.Time, max int) error
	// Claim uses the code under d for device at now. Only Claimed and
	// ClaimWrongDevice change it (both use it up); the Code is returned
	// for Claimed.
	Claim(d [32]byte, device string, now time.Time) (Code, Claim, error)
	// Withdraw drops partner's code of pairing id, used or not, and
	// reports whether there was one.
	Withdraw(partner, pairingID string) (bool, error)
}

// MemoryCodes is the CodeStore in process memory: codes are exchanged on
// the node that issued them and end with the process. Expired codes are
// swept by the calls themselves, at most once a minute.
type MemoryCodes struct {
	mu sync.Mutex // guards the fields below
	// codes by digest; byOwner maps partner\x00end user\x00device to
	// the digest of that owner's latest code.
	codes     map[[32]byte]*memCode
	byOwner   map[string][32]byte
	lastSweep time.Time
}

type memCode struct {
	Code
	used bool
}

var _ CodeStore = (*MemoryCodes)(nil)

// NewMemoryCodes returns an empty MemoryCodes.
func NewMemoryCodes() *MemoryCodes {
	return &MemoryCodes{codes: map[[32]byte]*memCode{}, byOwner: map[string][32]byte{}}
}

func ownerOf(c Code) string { return c.Partner + "\x00" + c.EndUser + "\x00" + c.Device }

// Issue implements CodeStore.
func (m *MemoryCodes) Issue(d [32]byte, c Code, now time.Time, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	owner := ownerOf(c)
	if old, ok := m.byOwner[owner]; ok {
		if oc, ok := m.codes[old]; ok && !oc.used {
			delete(m.codes, old) // the newest code wins
		}
	}
	if len(m.codes) >= max {
		return ErrTooManyCodes
	}
	m.codes[d] = &memCode{Code: c}
	m.byOwner[owner] = d
	return nil
}

// Claim implements CodeStore.
func (m *MemoryCodes) Claim(d [32]byte, device string, now time.Time) (Code, Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	c, ok := m.codes[d]
	switch {
	case !ok:
		return Code{}, ClaimUnknown, nil
	case c.used:
		return Code{}, ClaimUsed, nil
	case !now.Before(c.Expires):
		return Code{}, ClaimExpired, nil
	}
	c.used = true
	if device != c.Device {
		return Code{}, ClaimWrongDevice, nil
	}
	return c.Code, Claimed, nil
}

// Withdraw implements CodeStore.
func (m *MemoryCodes) Withdraw(partner, pairingID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	found := false
	for d, c := range m.codes {
		if c.PairingID == pairingID && c.Partner == partner {
			delete(m.codes, d)
			found = true
		}
	}
	return found, nil
}

// sweepLocked drops codes past their Retain and owners whose code is
// gone, used or expired, at most once per sweepInterval.
func (m *MemoryCodes) sweepLocked(now time.Time) {
	if now.Sub(m.lastSweep) < sweepInterval {
		return
	}
	m.lastSweep = now
	for d, c := range m.codes {
		if !now.Before(c.Retain) {
			delete(m.codes, d)
		}
	}
	for owner, d := range m.byOwner {
		if c, ok := m.codes[d]; !ok || c.used || !now.Before(c.Expires) {
			delete(m.byOwner, owner)
		}
	}
}
