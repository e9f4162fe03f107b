package router

// Codec of an AudioChunk.
type Codec string

const (
	CodecPCM  Codec = "pcm"  // mono int16 samples at SampleRate
	CodecOpus Codec = "opus" // one Opus packet, as the provider sent it
)

// AudioChunk is a piece of synthesised speech. Its slices are only valid
// during the callback that receives it; copy to keep.
type AudioChunk struct {
	Codec      Codec
	SampleRate int     // PCM rate, or 48000 for Opus
	PCM        []int16 // CodecPCM
	Opus       []byte  // CodecOpus: one packet, untouched
}
