package tools

import (
	"errors"
	"fmt"
)

// Config bounds the registry. Decoded from YAML under "tools".
type Config struct {
	// MaxPerPartner is the most tools one partner may hold.
	MaxPerPartner int `yaml:"max_per_partner"`
	// MaxSchemaBytes bounds one input_schema.
	MaxSchemaBytes int `yaml:"max_schema_bytes"`
	// MaxDescriptionChars bounds a description.
	MaxDescriptionChars int `yaml:"max_description_chars"`
}

// DefaultConfig returns the Partner API's limits.
func DefaultConfig() Config {
	return Config{MaxPerPartner: 25, MaxSchemaBytes: 32 << 10, MaxDescriptionChars: 1024}
}

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	var errs []error
	if c.MaxPerPartner < 1 || c.MaxPerPartner > 128 {
		errs = append(errs, errors.New("tools.max_per_partner: must be in [1, 128]"))
	}
	if c.MaxSchemaBytes < 256 || c.MaxSchemaBytes > 1<<20 {
		errs = append(errs, fmt.Errorf("tools.max_schema_bytes: must be in [256, %d]", 1<<20))
	}
	if c.MaxDescriptionChars < 1 {
		errs = append(errs, errors.New("tools.max_description_chars: must be at least 1"))
	}
	return errors.Join(errs...)
}
