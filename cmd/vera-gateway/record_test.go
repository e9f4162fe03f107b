package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordDirFlag: -record-dir overrides voice.record_dir and is checked
// like the config key.
func TestRecordDirFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"-record-dir", dir, "-print-config"}, envMap(nil), &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "record_dir: "+dir) {
		t.Errorf("effective config does not record into %s:\n%s", dir, out.String())
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-record-dir", file, "-print-config"}, envMap(nil), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "record_dir") || !strings.Contains(err.Error(), "-record-dir") {
		t.Errorf("a file as -record-dir: %v, want an error naming the flag and record_dir", err)
	}
}
