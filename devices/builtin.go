package devices

import (
	"fmt"
	"slices"
	"strings"
)

// Built-in profile ids.
const (
	MetaRayBanDisplay = "meta-rayban-display"
	EvenG2            = "even-g2"
	EvenG1            = "even-g1"
	Mentra            = "mentra"
	Phone             = "phone"
	Browser           = "browser"
	VoiceOnly         = "voice-only"
)

// hfpAudio is Bluetooth HFP through the phone: 16 kHz mono (mSBC wideband).
var hfpAudio = Audio{Mic: true, Speaker: true, SampleRateHz: 16000, Channels: 1, Transport: "bluetooth-hfp", Codecs: []string{"opus", "pcm16"}}

// builtins are the profiles the gateway ships. Numbers come from
// shared/research/glasses-anchors.md (§2, §6.2, §6.3); where the research
// marks a value unverified the profile stays conservative.
var builtins = []Profile{
	{
		// Meta toolkit tokens: 600×600, 24 px safe inset, body2 28/36,
		// heading2 36/44 bold, heading1 40/48 for numbers, label 24/32.
		// 24+2×44+12+8×36+12+72+24 = 520 ≤ 600.
		ID: MetaRayBanDisplay, Kind: KindGlasses, Audio: hfpAudio,
		Surfaces: []Surface{{
			ID: "display", Kind: SurfaceHUD, Width: 600, Height: 600, MarginPx: 24,
			Colors:     Colors{Model: ColorRGB, Levels: 256, BlackIsTransparent: true},
			TextBudget: TextBudget{LinesPerPage: 8, CharsPerLine: 38, TitleLines: 2},
			Fonts: Fonts{Family: "Go", BodyPx: 28, BodyLinePx: 36, TitlePx: 32, TitleLinePx: 44,
				HeadingPx: 30, HeadingLine: 40, EmphPx: 40, EmphLinePx: 48, MetaPx: 24, MaxBodyPx: 32},
			Buttons: true, ButtonRowPx: 72, GapPx: 12,
			Inputs: []Input{InputTap, InputKeys, InputVoice},
		}},
		AckTimeoutMS: 2000, UpdateThrottleMS: 500, RenderConfirmation: true,
	},
	{
		// 576×288 4-bit green, one firmware font with no size control.
		// ≤380 body chars per page: 7 lines × 50 chars = 350.
		ID: EvenG2, Kind: KindGlasses,
		Audio: Audio{Mic: true, Speaker: false, SampleRateHz: 16000, Channels: 1, Transport: "ble-lc3-via-phone", Codecs: []string{"pcm16"}},
		Surfaces: []Surface{{
			ID: "display", Kind: SurfaceHUD, Width: 576, Height: 288, MarginPx: 8,
			Colors:     Colors{Model: ColorGreen, Levels: 16, BlackIsTransparent: true},
			TextBudget: TextBudget{LinesPerPage: 7, CharsPerLine: 50, TitleLines: 1},
			Fonts: Fonts{Family: "firmware", FirmwareFont: true, BodyPx: 20, BodyLinePx: 28, TitlePx: 20, TitleLinePx: 28,
				HeadingPx: 20, HeadingLine: 28, EmphPx: 20, EmphLinePx: 28, MetaPx: 20, MaxBodyPx: 20},
			GapPx:  8,
			Inputs: []Input{InputTap, InputSwipe, InputVoice},
		}},
		AckTimeoutMS: 2000, UpdateThrottleMS: 170, RenderConfirmation: true,
	},
	{
		// 5 lines per screen: "TITLE n/N" then 4 body lines; 488 px text
		// area at firmware size 21; 300 ms last-wins throttle.
		ID: EvenG1, Kind: KindGlasses,
		Audio: Audio{Mic: true, Speaker: false, SampleRateHz: 16000, Channels: 1, Transport: "ble-lc3-via-phone", Codecs: []string{"pcm16"}},
		Surfaces: []Surface{{
			ID: "display", Kind: SurfaceHUD, Width: 488, Height: 136, MarginPx: 0,
			Colors:     Colors{Model: ColorGreen, Levels: 2, BlackIsTransparent: true},
			TextBudget: TextBudget{LinesPerPage: 4, CharsPerLine: 40, TitleLines: 1},
			Fonts: Fonts{Family: "firmware", FirmwareFont: true, BodyPx: 20, BodyLinePx: 27, TitlePx: 20, TitleLinePx: 27,
				HeadingPx: 20, HeadingLine: 27, EmphPx: 20, EmphLinePx: 27, MetaPx: 20, MaxBodyPx: 20},
			Inputs: []Input{InputTap, InputVoice},
		}},
		AckTimeoutMS: 2000, UpdateThrottleMS: 300, RenderConfirmation: true,
	},
	{
		// MentraOS TextWall/ReferenceCard on G1-class hardware: 5 lines,
		// 300 ms throttle, no render confirmation (safety is also spoken).
		ID: Mentra, Kind: KindGlasses, Audio: hfpAudio,
		Surfaces: []Surface{{
			ID: "text-wall", Kind: SurfaceHUD, Width: 576, Height: 136, MarginPx: 0,
			Colors:     Colors{Model: ColorGreen, Levels: 2, BlackIsTransparent: true},
			TextBudget: TextBudget{LinesPerPage: 4, CharsPerLine: 40, TitleLines: 1},
			Fonts: Fonts{Family: "firmware", FirmwareFont: true, BodyPx: 20, BodyLinePx: 27, TitlePx: 20, TitleLinePx: 27,
				HeadingPx: 20, HeadingLine: 27, EmphPx: 20, EmphLinePx: 27, MetaPx: 20, MaxBodyPx: 20},
			Inputs: []Input{InputTap, InputVoice},
		}},
		AckTimeoutMS: 3000, UpdateThrottleMS: 300, RenderConfirmation: false,
	},
	{
		// A phone screen in CSS px. 16+2×28+12+20×24+12+56+16 = 648 ≤ 844.
		ID: Phone, Kind: KindPhone,
		Audio: Audio{Mic: true, Speaker: true, SampleRateHz: 48000, Channels: 1, Transport: "webrtc", Codecs: []string{"opus"}},
		Surfaces: []Surface{{
			ID: "screen", Kind: SurfaceScreen, Width: 390, Height: 844, MarginPx: 16,
			Colors:     Colors{Model: ColorRGB, Levels: 256},
			TextBudget: TextBudget{LinesPerPage: 20, CharsPerLine: 40, TitleLines: 2},
			Fonts: Fonts{Family: "Go", BodyPx: 17, BodyLinePx: 24, TitlePx: 22, TitleLinePx: 28,
				HeadingPx: 18, HeadingLine: 26, EmphPx: 26, EmphLinePx: 34, MetaPx: 14, MaxBodyPx: 24},
			Buttons: true, ButtonRowPx: 56, GapPx: 12,
			Inputs: []Input{InputTap, InputVoice},
		}, {ID: "speaker", Kind: SurfaceVoice, Inputs: []Input{InputVoice}}},
		AckTimeoutMS: 2000, UpdateThrottleMS: 100, RenderConfirmation: true,
	},
	{
		// A browser panel. 24+2×32+12+14×26+12+56+24 = 556 ≤ 600.
		ID: Browser, Kind: KindBrowser,
		Audio: Audio{Mic: true, Speaker: true, SampleRateHz: 48000, Channels: 1, Transport: "webrtc", Codecs: []string{"opus"}},
		Surfaces: []Surface{{
			ID: "screen", Kind: SurfaceScreen, Width: 800, Height: 600, MarginPx: 24,
			Colors:     Colors{Model: ColorRGB, Levels: 256},
			TextBudget: TextBudget{LinesPerPage: 14, CharsPerLine: 72, TitleLines: 2},
			Fonts: Fonts{Family: "Go", BodyPx: 18, BodyLinePx: 26, TitlePx: 24, TitleLinePx: 32,
				HeadingPx: 20, HeadingLine: 28, EmphPx: 28, EmphLinePx: 36, MetaPx: 16, MaxBodyPx: 24},
			Buttons: true, ButtonRowPx: 56, GapPx: 12,
			Inputs: []Input{InputTap, InputKeys, InputVoice},
		}, {ID: "speaker", Kind: SurfaceVoice, Inputs: []Input{InputVoice}}},
		AckTimeoutMS: 2000, UpdateThrottleMS: 100, RenderConfirmation: true,
	},
	{
		// Audio only (a headset or a call): cards are spoken, never drawn.
		ID: VoiceOnly, Kind: KindVoice,
		Audio:              Audio{Mic: true, Speaker: true, SampleRateHz: 16000, Channels: 1, Transport: "webrtc", Codecs: []string{"opus", "pcm16"}},
		Surfaces:           []Surface{{ID: "speaker", Kind: SurfaceVoice, Colors: Colors{Model: ColorNone}, Inputs: []Input{InputVoice}}},
		AckTimeoutMS:       2000,
		RenderConfirmation: false,
	},
}

// IDs returns the built-in profile ids, sorted.
func IDs() []string {
	ids := make([]string, len(builtins))
	for i, p := range builtins {
		ids[i] = p.ID
	}
	slices.Sort(ids)
	return ids
}

// Builtins returns deep copies of every built-in profile in a stable order.
func Builtins() []Profile {
	out := make([]Profile, len(builtins))
	for i, p := range builtins {
		out[i] = p.clone()
	}
	return out
}

// Lookup returns a copy of the built-in profile with the given id. An unknown
// id yields an error wrapping ErrUnknownDevice that lists the known ids.
func Lookup(id string) (Profile, error) {
	for _, p := range builtins {
		if p.ID == id {
			return p.clone(), nil
		}
	}
	return Profile{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownDevice, id, strings.Join(IDs(), ", "))
}
