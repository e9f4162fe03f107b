package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// envPrefix starts every environment override: VERA_LISTEN,
// VERA_LIMITS_REQUESTS_PER_MINUTE, VERA_ROUTER_MAX_BODY_BYTES, …
const envPrefix = "VERA_"

// decodeStrict decodes one YAML document onto cfg (which holds the
// defaults). Unknown keys are errors naming the key and its line.
func decodeStrict(r io.Reader, cfg any) error {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file keeps the defaults
		}
		return cleanYAMLError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("config holds more than one YAML document")
	}
	return nil
}

// cleanYAMLError turns yaml.v3's "field x not found in type main.fileConfig"
// into "line N: unknown key x".
func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if before, after, ok := strings.Cut(m, ": field "); ok {
			if name, _, ok := strings.Cut(after, " not found in type"); ok {
				m = before + ": unknown key " + strconv.Quote(name)
			}
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}

// loadConfigFile decodes path strictly onto cfg.
func loadConfigFile(path string, cfg any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := decodeStrict(bytes.NewReader(b), cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// applyEnv sets every scalar field of cfg (a pointer to a struct) from
// VERA_<PATH>, where PATH is the field's YAML key path joined by "_" in
// upper case. Lists and maps are configured in the file only. It returns
// the variables it used, for the start-up log.
func applyEnv(cfg any, getenv func(string) string) ([]string, error) {
	var used []string
	err := walkScalars(reflect.ValueOf(cfg).Elem(), nil, func(path []string, v reflect.Value) error {
		name := envPrefix + strings.ToUpper(strings.Join(path, "_"))
		s := getenv(name)
		if s == "" {
			return nil
		}
		if err := setScalar(v, s); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		used = append(used, name)
		return nil
	})
	return used, err
}

// walkScalars calls fn for every settable scalar field under v with its
// YAML key path. Inline structs add no path element.
func walkScalars(v reflect.Value, path []string, fn func([]string, reflect.Value) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if strings.Contains(opts, "inline") {
			if err := walkScalars(fv, path, fn); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		p := append(append([]string(nil), path...), name)
		switch fv.Kind() {
		case reflect.Struct:
			if err := walkScalars(fv, p, fn); err != nil {
				return err
			}
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			if err := fn(p, fv); err != nil {
				return err
			}
		}
	}
	return nil
}

func setScalar(v reflect.Value, s string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not a boolean", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%q is not a duration", s)
			}
			v.SetInt(int64(d))
			return nil
		}
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a non-negative integer", s)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		v.SetFloat(n)
	}
	return nil
}

// redacted is what -print-config shows in place of a secret.
const redacted = "[redacted]"

// redact blanks every non-empty string field whose YAML key is a secret
// (secret, token_secret, api_key, …; not the *_env names), in structs,
// slices and maps alike. It works on cfg in place: call it on a copy.
func redact(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redact(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			fv := v.Field(i)
			if fv.Kind() == reflect.String && isSecretKey(name) && fv.String() != "" {
				fv.SetString(redacted)
				continue
			}
			redact(fv)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			redact(v.Index(i))
		}
	}
}

func isSecretKey(name string) bool {
	if strings.HasSuffix(name, "_env") {
		return false
	}
	return name == "secret" || strings.HasSuffix(name, "_secret") || name == "api_key" || name == "password" || name == "token"
}
