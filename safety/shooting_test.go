package safety

import "testing"

// TestShootingNear: someone armed, or shots, near the speaker now is danger
// from others (crisis), in each language; a photo shoot, a basketball drill,
// a game, a film and the news are not.
func TestShootingNear(t *testing.T) {
	d := NewDetector()
	for _, s := range []string{
		"there is a gunman in the building",
		"i heard gunshots next door",
		"someone is shooting outside my house",
		"i can hear gunfire down the street, i'm scared",
		"there's a man with a gun in the school and we're hiding in a closet",
		"hay un tiroteo en la escuela y estamos escondidos",
		"il y a un homme armé dans le bâtiment",
		"schüsse im gebäude, wir haben uns eingeschlossen",
	} {
		if r := d.Detect(s); r.Level != LevelCrisis {
			t.Errorf("Detect(%q) = %v (%s), want crisis", s, r.Level, r.Reason)
		}
	}
	for _, s := range []string{
		"we're shooting a video at school today",
		"the photographer is shooting outside in the garden",
		"the kids are shooting hoops next door",
		"my son plays a shooter game in the living room",
		"the gunman in the movie was the brother all along",
		"the gunman was arrested in 1998",
		"basketball shooting practice at school tonight",
		"my brother plays shooter games downstairs all night",
		"i heard gunshots on the tv next door",
	} {
		if r := d.Detect(s); r.Level != LevelNone {
			t.Errorf("Detect(%q) = %v (%s), want none", s, r.Level, r.Reason)
		}
	}
}
