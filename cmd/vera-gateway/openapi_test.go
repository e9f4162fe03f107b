package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestOpenAPICoversRoutes fails when a route is registered without being
// documented in docs/openapi.yaml, or documented without being registered.
func TestOpenAPICoversRoutes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
		Info    map[string]any                  `yaml:"info"`
		Comps   map[string]map[string]yaml.Node `yaml:"components"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi version %q, want 3.1.x", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "post", "put", "patch", "delete":
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(documented)

	a, err := newApp(testFileConfig(), envMap(nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	registered := a.srv.Routes()

	reg := map[string]bool{}
	for _, r := range registered {
		reg[r] = true
	}
	docd := map[string]bool{}
	for _, d := range documented {
		docd[d] = true
		if !reg[d] {
			t.Errorf("documented but not registered: %s", d)
		}
	}
	for _, r := range registered {
		if !docd[r] {
			t.Errorf("registered but not documented in docs/openapi.yaml: %s", r)
		}
	}
	if len(registered) < 4 {
		t.Fatalf("only %d routes registered: %v", len(registered), registered)
	}
}
