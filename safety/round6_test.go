package safety

import "testing"

// round6Case is one utterance and the level range it must land in.
type round6Case struct {
	text     string
	min, max Level
}

func checkRound6(t *testing.T, d *Detector, cases []round6Case) {
	t.Helper()
	for _, c := range cases {
		r := d.Detect(c.text)
		if r.Level < c.min || r.Level > c.max {
			t.Errorf("Detect(%q) = %v (%s), want %v..%v", c.text, r.Level, r.Reason, c.min, c.max)
		}
	}
}

const (
	r6None  = LevelNone
	r6Elev  = LevelElevated
	r6Cris  = LevelCrisis
	r6Shown = LevelElevated // at least a card
)

// TestRound6Behaviours: the set-4 categories named in the writer's own
// words — self-injury other than cutting, eating-disorder behaviour,
// gambling and medicine misuse — show a card in every language, and their
// everyday neighbours (nail-biting, a recipe's calories, a friendly bet, a
// changed prescription) do not.
func TestRound6Behaviours(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		// self-injury beyond cutting
		{"when things go wrong i punch myself in the thighs until there are bruises", r6Shown, r6Cris},
		{"me pellizco los brazos hasta hacerme heridas cuando me agobio", r6Shown, r6Cris},
		{"je me griffe le cou jusqu'au sang quand je panique", r6Shown, r6Cris},
		{"ich beiss mir in die hand bis blaue flecken kommen, fast jeden abend", r6Shown, r6Cris},
		{"i bite my nails when i watch horror films", r6None, r6None},
		{"me muerdo las uñas en los exámenes", r6None, r6None},
		// eating disorders
		{"i throw my lunch away every day and tell mum i ate it", r6Shown, r6Cris},
		{"je fais semblant de manger devant mes parents", r6Shown, r6Cris},
		{"hoy 200 calorías y me siento gorda, mañana nada", r6Shown, r6Cris},
		{"nach jedem essen geh ich spucken, keiner weiß es", r6Shown, r6Cris},
		{"this soup is only 250 calories a bowl", r6None, r6None},
		{"la receta tiene 300 calorías por ración", r6None, r6None},
		// gambling, medicine misuse, withdrawal
		{"i put my whole paycheck on parlays again and now i owe 6k", r6Shown, r6Cris},
		{"j'ai encore flambé mon salaire aux paris sportifs, j'ai des dettes partout", r6Shown, r6Cris},
		{"he vuelto a apostar el dinero del alquiler, no puedo parar", r6Shown, r6Cris},
		{"hab wieder alles bei sportwetten verzockt und schulden bei meinem bruder", r6Shown, r6Cris},
		{"my doctor cut me off so i buy the oxy from a guy on the street now", r6Shown, r6Cris},
		{"without a beer before breakfast my hands shake", r6Shown, r6Cris},
		{"we bet a coffee on who wins the derby", r6None, r6None},
		{"wir haben um eine pizza gewettet", r6None, r6None},
		{"my doctor switched my allergy tablets to a cheaper brand", r6None, r6None},
		{"five years since i quit gambling and every debt is paid off", r6None, r6None},
	})
}

// TestRound6DangerAndMethods: danger from others heard through a wall or at
// the door, and methods named in a plan or a scene, are crisis; their
// ordinary look-alikes stay none.
func TestRound6DangerAndMethods(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"upstairs i heard her scream and something smash and now it's gone quiet", r6Cris, r6Cris},
		{"he took my keys and he's blocking the door, he's getting aggressive", r6Cris, r6Cris},
		{"il a pris mes clés, il bloque la porte et il devient violent", r6Cris, r6Cris},
		{"mein ex hat geschrieben dass er mich heute nacht absticht", r6Cris, r6Cris},
		{"where can you jump off the dam without anyone coming, i want to do it friday", r6Cris, r6Cris},
		{"planning to step in front of the night bus tomorrow", r6Cris, r6Cris},
		{"mi padre guarda una pistola en el armario y la voy a usar conmigo", r6Cris, r6Cris},
		{"hab mir ein abschleppseil gekauft, der haken im keller hält", r6Cris, r6Cris},
		{"which artery do you cut to make sure it works", r6Cris, r6Cris},
		{"combien de doliprane pour que le foie lâche", r6Cris, r6Cris},
		{"the kids screamed with joy at the fireworks", r6None, r6None},
		{"step in front of the camera and smile", r6None, r6None},
		{"how did so many workers die building the railway", r6None, r6None},
	})
}

// TestRound6GenericConditional: a conditional about people in general
// ("if they didn't want to live …", a mis-heard meeting line) with no
// speaker, listener or person the speaker knows clears a third-party frame;
// the same conditional about one's son, or said of the speaker or to the
// listener, keeps its card.
func TestRound6GenericConditional(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"if they didn't want to live steve steve got to learn", r6None, r6None},
		{"if they did not want to live there they should have said", r6None, r6None},
		{"if my son didn't want to live anymore what would i do", r6Shown, r6Cris},
		{"if he didn't want to live anymore he would tell me", r6Shown, r6Cris},
		{"if they found out i don't want to live they would panic", r6Cris, r6Cris},
		{"if they didn't want to live anymore, would you tell me", r6Shown, r6Cris},
	})
	// the frame itself, without the model: generic subject after a
	// conditional, and no person word anywhere
	toks := []string{"si", "la", "gente", "no", "quisiera", "vivir"}
	sets := make([]cset, len(toks))
	concepts.tag(toks, sets)
	if !genericHypothetical(toks, sets, 3) {
		t.Errorf("genericHypothetical(%v) = false, want true", toks)
	}
	toks = []string{"si", "mi", "hijo", "no", "quisiera", "vivir"}
	sets = make([]cset, len(toks))
	concepts.tag(toks, sets)
	if genericHypothetical(toks, sets, 3) {
		t.Errorf("genericHypothetical(%v) = true, want false (a son)", toks)
	}
}

// TestRound6FalseAlarms: recovery told as over, a professional's question,
// jokes of immortality, a nuisance that "will kill me", sport finals, a
// play read in class, idioms and a sale before moving abroad show no card;
// the same words with the speaker's own danger still do.
func TestRound6FalseAlarms(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"j'étais anorexique à la fac mais c'est derrière moi, je cours des marathons maintenant", r6None, r6None},
		{"my therapist says i've been stable for three years, we're down to monthly check-ins", r6None, r6None},
		{"as a school counsellor how do i ask a student about suicidal thoughts", r6None, r6None},
		{"als sozialarbeiterin, wie spreche ich suizidgedanken bei klienten an", r6None, r6None},
		{"como orientadora, cómo le pregunto a un alumno por ideas de suicidio", r6None, r6None},
		{"my nan says she won't die until she sees me married, so she's immortal", r6None, r6None},
		{"der stau auf der a3 bringt mich noch eines tages um", r6None, r6None},
		{"los atascos de la m30 me van a matar", r6None, r6None},
		{"that penalty shootout nearly killed me, what a final", r6None, r6None},
		{"we read bodas de sangre in literature class, so tragic", r6None, r6None},
		{"i'll bite the bullet and ring the landlord", r6None, r6None},
		{"je vends mon vélo avant de partir vivre au canada, ça intéresse qqn ?", r6None, r6None},
		// the speaker's own danger beside the same words keeps the card
		{"as a nurse i want to die and i know which pills", r6Shown, r6Cris},
		{"the traffic is awful and i want to kill myself tonight", r6Shown, r6Cris},
	})
}

// TestRound6SpanishHe: Spanish "he" before a participle is the speaker
// ("he decidido morir": I have decided), not English "he".
func TestRound6SpanishHe(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"he decidido morir esta noche", r6Cris, r6Cris},
		{"he wants to die", r6Shown, r6Elev},
	})
}

// TestRound6ScenesAndPreparation: a scene told in fragments (rope tied,
// standing on the chair), a railing climbed, a medicine or poison named by
// its own name, a child left alone without food, things given away under a
// cover story or for after one's death, a date to be rid of a pet, and a
// bridge's height beside a jump on Sunday are read; typing a message is an
// everyday act, not code.
func TestRound6ScenesAndPreparation(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"the rope is up. standing on the stool now. not sure why i'm typing", r6Cris, r6Cris},
		{"i'm past the barrier on the bridge now, looking at the water", r6Cris, r6Cris},
		{"me acabo de tomar 30 de lorazepam con vino", r6Cris, r6Cris},
		{"j'ai bu du désherbant il y a dix minutes", r6Cris, r6Cris},
		{"i'm 8 and my mum has been gone since friday, there's nothing to eat", r6Cris, r6Cris},
		{"gave my brother my playstation, he thinks i'm moving. i'm not", r6Cris, r6Cris},
		{"note pour ma sœur : où sont les papiers de la banque, pour après ma mort", r6Cris, r6Cris},
		{"hab meine bücher an freunde verteilt, wo ich hingeh brauch ich die nicht mehr", r6Cris, r6Cris},
		{"¿alguien quiere un gato? no me lo puedo quedar después del viernes", r6Shown, r6Cris},
		{"der kirchturm ist über fünfzig meter hoch, am samstag steig ich rauf und spring", r6Cris, r6Cris},
		{"ich mach heute schluss, endgültig, ich kann nicht mehr", r6Shown, r6Cris},
		{"my wrists hurt from typing all day", r6None, r6None},
		{"we jump off the pier into the sea every summer with friends", r6None, r6None},
		{"ich mach morgen schluss mit ihm, endgültig", r6None, r6None},
	})
}

// TestRound6ElevatedConcerns: control by a partner (money, work, clothes, an
// ultimatum), burden and hopelessness in everyday words, wanting to join
// the dead, a wish for an illness and binge-purging told without "i" show
// a card; their neighbours do not.
func TestRound6ElevatedConcerns(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"my boyfriend takes all my money and gives me an allowance, i have to hand him every receipt", r6Shown, r6Cris},
		{"mi marido me prohibió trabajar y controla cada euro que gasto", r6Shown, r6Cris},
		{"mein freund verbietet mir, meine freundinnen zu treffen, und kontrolliert jeden anruf", r6Shown, r6Cris},
		{"ma femme me fait la gueule pendant des jours si je sors sans elle", r6Shown, r6Cris},
		{"seit dem unfall lieg ich allen nur auf der tasche", r6Shown, r6Cris},
		{"everyone would have a much easier time if i wasn't around", r6Shown, r6Cris},
		{"es wird nie wieder gut, ich glaub nicht mehr dran", r6Shown, r6Cris},
		{"depuis que maman est morte je veux juste être avec elle là-haut", r6Shown, r6Cris},
		{"honestly if i got cancer i'd be relieved", r6Shown, r6Cris},
		{"atracón de galletas y luego vomitar en el baño, casi todos los días", r6Shown, r6Cris},
		{"my husband took the kids to school and then went to work", r6None, r6None},
	})
}

// TestRound6DangerNow: a threat beside a weapon (in the kitchen too), a
// drink spiked, a stranger or a driver who will not let one out, a gun to
// someone's head, bleeding that is not stopping are crisis; a knife
// sharpened for dinner is not.
func TestRound6DangerNow(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"he said if i leave he'll kill me and now he's sharpening a knife in the kitchen", r6Cris, r6Cris},
		{"mein vater ist betrunken, hat das gewehr geholt und bedroht meine mutter", r6Cris, r6Cris},
		{"creo que me echaron algo en la bebida, no puedo caminar bien", r6Cris, r6Cris},
		{"the driver locked the doors and won't let me out, this isn't my street", r6Cris, r6Cris},
		{"someone in my group chat says he has a gun to his head right now", r6Cris, r6Cris},
		{"i cut too deep and it's not stopping", r6Cris, r6Cris},
		{"i'm sharpening the knives before i carve the roast", r6None, r6None},
		{"el libro trata de una chica que se muda a madrid", r6None, r6None},
	})
}

// TestRound6JumpForFun: a jump from a bridge into a lake with friends is
// a summer outing, not a plan.
func TestRound6JumpForFun(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"jumped off the bridge into the lake this weekend with friends, so fun", r6None, r6None},
		{"the bridge is eighty metres high, on sunday i'll drive there and jump", r6Cris, r6Cris},
	})
}

// TestRound6PrescriptionFree: a medicine sold without a prescription is no
// misuse; buying round the prescriber is.
func TestRound6PrescriptionFree(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"paracetamol is sold without a prescription here", r6None, r6None},
		{"since the doctor stopped my diazepam i buy it without a prescription and take three times as much", r6Shown, r6Cris},
	})
}

// TestRound6SkinAndGrounding: scratching a skin condition or insect bites
// is not self-injury, and a parent grounding a teenager is not a captor;
// scratching oneself bloody in a panic still shows a card.
func TestRound6SkinAndGrounding(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"je me gratte partout à cause des moustiques, j'ai des marques", r6None, r6None},
		{"ich kratze mich ständig wegen der neurodermitis, die haut ist blutig", r6None, r6None},
		{"mi madre me quitó el móvil y no me deja salir hasta que apruebe mates", r6None, r6None},
		{"quand je panique je me gratte les bras jusqu'au sang", r6Shown, r6Cris},
	})
}

// TestRound6WorkAndNews: a book just finished, cases a professional sees at work and a death on
// the TV news are no card; the professional's own wish still is; German
// "Nachrichten" are messages as well as news, so a partner reading them
// keeps its card.
func TestRound6WorkAndNews(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"just finished reading 'a farewell to arms', what an ending", r6None, r6None},
		{"como enfermera veo intentos de suicidio cada semana", r6None, r6None},
		{"als notfallsanitäter sehe ich jede woche suizidversuche", r6None, r6None},
		{"en el telediario hablaron de un hombre que se suicidó en la cárcel", r6None, r6None},
		{"as a nurse i see suicide attempts and now i want to die too", r6Cris, r6Cris},
		{"mein freund liest alle meine nachrichten und verbietet mir auszugehen", r6Shown, r6Cris},
	})
}

// TestRound6StrangledAndDebts: strangling told in any language is crisis
// (in the past, elevated); gambling debts kept secret show a card; a cat
// choking on a hairball does not.
func TestRound6StrangledAndDebts(t *testing.T) {
	checkRound6(t, NewDetector(), []round6Case{
		{"he grabbed me by the throat and pushed me against the door", r6Cris, r6Cris},
		{"me agarró del cuello contra la pared", r6Cris, r6Cris},
		{"il m'a plaquée contre le mur et serré le cou", r6Cris, r6Cris},
		{"er hat mir den hals zugedrückt bis ich keine luft mehr bekam", r6Cris, r6Cris},
		{"he choked me two years ago but we're fine now", r6Shown, r6Elev},
		{"my cat chokes on hairballs every spring", r6None, r6None},
		{"j'ai des dettes de jeu et ma femme ne sait rien", r6Shown, r6Cris},
		{"hab schulden vom zocken und meine frau weiß nichts", r6Shown, r6Cris},
	})
}
