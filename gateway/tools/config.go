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
	// MaxSchemaDepth bounds the nesting of objects and arrays in an
	// input_schema and in a proposed action's input.
	MaxSchemaDepth int `yaml:"max_schema_depth"`
	// MaxSchemaNodes bounds the JSON values (objects, arrays, strings,
	// numbers, literals) of an input_schema. Compiling costs up to about the
	// square of it, hence the ceiling.
	MaxSchemaNodes int `yaml:"max_schema_nodes"`
	// MaxInputBytes bounds a proposed action's input.
	MaxInputBytes int `yaml:"max_input_bytes"`
}

// Ceilings of the keys that bound compile and check work: past them the
// worst accepted schema no longer compiles within 50 ms of CPU.
const (
	ceilSchemaDepth = 64
	ceilSchemaNodes = 2000
)

// DefaultConfig returns the Partner API's limits.
func DefaultConfig() Config {
	return Config{MaxPerPartner: 25, MaxSchemaBytes: 32 << 10, MaxDescriptionChars: 1024,
		MaxSchemaDepth: 32, MaxSchemaNodes: 1000, MaxInputBytes: 32 << 10}
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
	if c.MaxSchemaDepth < 4 || c.MaxSchemaDepth > ceilSchemaDepth {
		errs = append(errs, fmt.Errorf("tools.max_schema_depth: must be in [4, %d]", ceilSchemaDepth))
	}
	if c.MaxSchemaNodes < 16 || c.MaxSchemaNodes > ceilSchemaNodes {
		errs = append(errs, fmt.Errorf("tools.max_schema_nodes: must be in [16, %d]", ceilSchemaNodes))
	}
	if c.MaxInputBytes < 256 || c.MaxInputBytes > 1<<20 {
		errs = append(errs, fmt.Errorf("tools.max_input_bytes: must be in [256, %d]", 1<<20))
	}
	return errors.Join(errs...)
}
