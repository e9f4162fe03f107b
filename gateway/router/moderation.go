package router

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/veraneural/vera-gateway/safety"
)

// classifyProvider judges one user turn: the level it reads and the reason
// ids that gave it ("<model>:<category>", never the text).
type classifyProvider interface {
	classify(ctx context.Context, text string) (safety.Level, []string, error)
}

// maxClassifierBody bounds a classifier's answer (a moderation result is a
// few kilobytes, a guard verdict a few bytes).
const maxClassifierBody = 1 << 20

// classifierPost sends body as JSON and decodes the JSON answer into out.
// Only what the caller put in body leaves: no idempotency key, no session,
// partner or user id (BRIEF §5.6; README "Privacy").
func classifierPost(ctx context.Context, env *providerEnv, url, key string, body, out any) error {
	buf, err := json.Marshal(body)
	if err != nil {
		return &ProviderError{Kind: KindInternal, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(buf))
	if err != nil {
		return &ProviderError{Kind: KindInternal, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := do(ctx, env.client, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return httpFailure(resp, min(env.maxBody, maxClassifierBody), env.clock.Now())
	}
	return decodeJSON(resp, min(env.maxBody, maxClassifierBody), out)
}

// moderation is an openai-moderation model: POST {base}/moderations with
// {"model","input"}; the public answer's results[0].category_scores (or,
// for a category without a score, its categories flag) against the
// configured thresholds.
type moderation struct {
	name, model, url, key string
	env                   *providerEnv
	crisis, elevated      map[string]float64
}

func newModeration(cfg ModelConfig, key string, env *providerEnv) *moderation {
	crisis, elevated := DefaultModerationThresholds()
	maps.Copy(crisis, cfg.Classifier.Crisis)
	maps.Copy(elevated, cfg.Classifier.Elevated)
	return &moderation{name: cfg.Name, model: cfg.Model, url: strings.TrimRight(cfg.BaseURL, "/") + "/moderations",
		key: key, env: env, crisis: crisis, elevated: elevated}
}

// moderationResponse is the public shape; other fields are ignored.
type moderationResponse struct {
	Results []struct {
		Categories     map[string]bool    `json:"categories"`
		CategoryScores map[string]float64 `json:"category_scores"`
	} `json:"results"`
}

func (p *moderation) classify(ctx context.Context, text string) (safety.Level, []string, error) {
	var out moderationResponse
	if err := classifierPost(ctx, p.env, p.url, p.key, map[string]string{"model": p.model, "input": text}, &out); err != nil {
		return safety.LevelNone, nil, err
	}
	if len(out.Results) == 0 {
		return safety.LevelNone, nil, perr(KindProtocol, "moderation: no results")
	}
	res := out.Results[0]
	if len(res.Categories) == 0 && len(res.CategoryScores) == 0 {
		return safety.LevelNone, nil, perr(KindProtocol, "moderation: no categories or category_scores")
	}
	score := func(cat string) float64 {
		if v, ok := res.CategoryScores[cat]; ok {
			return v
		}
		if res.Categories[cat] {
			return 1
		}
		return 0
	}
	level, reasons := safety.LevelNone, []string(nil)
	for _, step := range []struct {
		level safety.Level
		th    map[string]float64
	}{{safety.LevelCrisis, p.crisis}, {safety.LevelElevated, p.elevated}} {
		for cat, th := range step.th {
			if score(cat) >= th {
				reasons = append(reasons, p.name+":"+cat)
			}
		}
		if len(reasons) > 0 {
			level = step.level
			break
		}
	}
	slices.Sort(reasons)
	return level, reasons, nil
}
