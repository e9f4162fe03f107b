package glasses

import (
	"github.com/veraneural/vera-gateway/safety"
)

// Test resources written for these tests (the real catalog lives in safety).
var (
	res988 = safety.Resource{
		ID: "us-988", Name: "988 Suicide & Crisis Lifeline", Country: "US",
		Description: "Free, confidential support, 24/7, in English and Spanish.",
		Actions: []safety.Action{
			{Type: safety.ActionCall, Value: "988"},
			{Type: safety.ActionText, Value: "988"},
			{Type: safety.ActionChat, Value: "988lifeline.org/chat"},
		},
	}
	resCTL = safety.Resource{
		ID: "us-ctl", Name: "Crisis Text Line", Country: "US",
		Description: "Free, 24/7 text support with a trained volunteer.",
		Actions:     []safety.Action{{Type: safety.ActionText, Value: "741741", Label: "Text HOME to 741741"}},
	}
	resSamaritans = safety.Resource{
		ID: "uk-samaritans", Name: "Samaritans", Country: "GB",
		Description: "Whatever you're going through, call any time, for free.",
		Hours:       "24 hours a day, 365 days a year",
		Actions:     []safety.Action{{Type: safety.ActionCall, Value: "116 123"}, {Type: safety.ActionURL, Value: "https://www.samaritans.org/how-we-can-help/contact-samaritan/"}},
	}
	resLifeline = safety.Resource{
		ID: "au-lifeline", Name: "Lifeline Australia", Country: "AU",
		Description: "24-hour crisis support and suicide prevention.",
		Actions:     []safety.Action{{Type: safety.ActionCall, Value: "13 11 14"}},
	}
)

func threeResources() []safety.Resource {
	return []safety.Resource{res988, resCTL, resSamaritans}
}
