package audit

import (
	"errors"
	"time"
)

// Page limits of GET /v1/audit/decisions.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

// Config bounds the audit log. Decoded from YAML under "audit".
type Config struct {
	// RetentionDays is how long a record is kept.
	RetentionDays int `yaml:"retention_days"`
	// MaxRecordsPerPartner bounds one partner's records; the oldest go
	// first. Per partner, so one busy partner never evicts another's.
	MaxRecordsPerPartner int `yaml:"max_records_per_partner"`
}

// DefaultConfig keeps 90 days and at most a million records per partner.
func DefaultConfig() Config {
	return Config{RetentionDays: 90, MaxRecordsPerPartner: 1_000_000}
}

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	var errs []error
	if c.RetentionDays < 1 || c.RetentionDays > 3650 {
		errs = append(errs, errors.New("audit.retention_days: must be in [1, 3650]"))
	}
	if c.MaxRecordsPerPartner < 1 || c.MaxRecordsPerPartner > 100_000_000 {
		errs = append(errs, errors.New("audit.max_records_per_partner: must be in [1, 100000000]"))
	}
	return errors.Join(errs...)
}

func (c Config) retention() time.Duration { return time.Duration(c.RetentionDays) * 24 * time.Hour }
