// Package yamlconf is the gateway's config file machinery, for cmd/ (the
// only place that reads configuration): one YAML document decoded
// strictly onto a struct holding the defaults (unknown keys are errors
// naming the key and its line), environment overrides of every scalar by
// its YAML key path, and redaction of every secret for printing. It
// reads no file and no environment itself: cmd/ passes a reader and
// getenv.
package yamlconf

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// DecodeStrict decodes one YAML document onto cfg (which holds the
// defaults). Unknown keys are errors naming the key and its line.
func DecodeStrict(r io.Reader, cfg any) error {
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

// ApplyEnv sets every scalar field of cfg (a pointer to a struct) from
// <prefix><PATH> (VERA_LISTEN, VERA_ROUTER_MAX_BODY_BYTES, …), where PATH
// is the field's YAML key path joined by "_" in upper case. Lists and maps
// are configured in the file only. It returns the variables it used, for
// the start-up log.
func ApplyEnv(cfg any, prefix string, getenv func(string) string) ([]string, error) {
	var used []string
	err := walkScalars(reflect.ValueOf(cfg).Elem(), nil, func(path []string, v reflect.Value) error {
		name := prefix + strings.ToUpper(strings.Join(path, "_"))
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

// Redacted is what Redact puts in place of a secret.
const Redacted = "[redacted]"

// Redact blanks every secret in cfg (a pointer), found generically so that a section
// added later is covered without a list to keep: every non-empty string
// whose YAML key is secret-shaped (see isSecretKey), and the userinfo of
// every URL-shaped string (user:pass@host), in structs, slices and maps
// alike. It works on cfg in place (maps are replaced by redacted copies):
// call it on a copy.
func Redact(cfg any) { redact(reflect.ValueOf(cfg)) }

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
			redactNamed(v.Field(i), name)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			redactNamed(v.Index(i), "")
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		cp := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			name := ""
			if it.Key().Kind() == reflect.String {
				name = it.Key().String()
			}
			redactNamed(e, name)
			cp.SetMapIndex(it.Key(), e)
		}
		v.Set(cp)
	}
}

// redactNamed redacts one value held under the YAML key name ("" for a
// list element).
func redactNamed(fv reflect.Value, name string) {
	if fv.Kind() != reflect.String {
		redact(fv)
		return
	}
	switch {
	case fv.String() == "" || !fv.CanSet():
	case isSecretKey(name):
		fv.SetString(Redacted)
	default:
		fv.SetString(redactUserinfo(fv.String()))
	}
}

// redactUserinfo replaces the userinfo of a URL-shaped string
// (scheme://user:pass@host, turn:user:pass@host) with [redacted].
func redactUserinfo(s string) string {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/@ ") {
		return s
	}
	authority := strings.TrimPrefix(rest, "//")
	end := strings.IndexAny(authority, "/?#")
	if end < 0 {
		end = len(authority)
	}
	at := strings.LastIndexByte(authority[:end], '@')
	if at < 0 {
		return s
	}
	prefix := s[:len(s)-len(authority)]
	return prefix + Redacted + authority[at:]
}

// isSecretKey reports whether a YAML key names a secret: anything that
// says secret, password, passphrase, credential, token (not its ttl
// settings), private or api key, or authorization — never the *_env
// names, which only say where a secret is read from.
func isSecretKey(name string) bool {
	n := strings.ToLower(name)
	if strings.HasSuffix(n, "_env") || strings.HasSuffix(n, "_seconds") {
		return false
	}
	for _, w := range []string{"secret", "password", "passwd", "passphrase", "credential", "token", "api_key", "apikey", "private_key", "authorization"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
