package safety

import (
	"errors"
	"fmt"
	"strings"
)

// Frames are the compositional tier: a frame fires when every one of its
// slots is filled by a different word within a few words of the others,
// each slot naming concepts (concepts.go), and none of its veto concepts
// occurs in the utterance. Because slots are concepts, one frame covers
// every synonym and every language: "took & med & amount" reads "i took
// all my pills", "me tomé toda la caja de pastillas", "j'ai avalé toute la
// boîte de cachets" and "ich habe die ganze packung tabletten genommen".
//
// Slot syntax: concepts separated by "|"; a slot may end in
// "!w1,w2" to refuse a word followed by one of those words ("life!in,at":
// "i don't want to live" but not "… to live in the city").
//
// Flags lower a crisis frame to elevated, never to none: fNeg when a
// negation sits inside or just before the match ("i'm not going to take
// all my pills"), fPast when the utterance places it in the past ("i took
// all my pills two years ago").
type frameDef struct {
	id    string
	level Level
	span  int // the slots' words lie within this many words
	slots string
	veto  string
	flags frameFlag
}

type frameFlag uint8

const (
	fNeg frameFlag = 1 << iota
	fPast
	// fSpeaker: the last slot's word must have the speaker as subject
	// ("quiero morir", "i want to die"), not a thing ("my phone is about
	// to die").
	fSpeaker
	// fOther: someone else as the subject lowers to elevated ("he wants
	// to die").
	fOther
	// fOwnAct: not when someone else kills the speaker (subjectAfter).
	fOwnAct
	// fAsksHow: the second slot is dying or killing as something to do,
	// not a death that happened ("how many people died on the titanic",
	// "wie viele sind bei der flut gestorben") or one avoided ("how do i
	// pass the water temple without dying").
	fAsksHow
)

const vetoCommon = "fiction|news|code|cook|sport|role"

// vetoNoCook: danger from others, where a pan or a knife in the kitchen is
// no reason to look away ("she's hitting me with a pan").
const vetoNoCook = "fiction|news|code|sport"

var frameDefs = []frameDef{
	// ---- acts in progress or just done ----
	{"took_meds", LevelCrisis, 9, "self|my & took & med & amount|bignum", "routine|question|safe|safekeep|" + vetoCommon, fNeg | fPast},
	{"took_meds_other", LevelCrisis, 9, "friend|family|partner & took & med & amount|bignum", "routine|question|safe|safekeep|" + vetoCommon, fNeg | fPast},
	{"overdosed", LevelCrisis, 7, "self|my|friend|family|partner & overdosed", "safekeep|treat|idiom|question|safe|" + vetoCommon, fNeg | fPast},
	{"drank_poison", LevelCrisis, 9, "self|my|friend|family|partner & took & poison", "question|safe|benign|" + vetoCommon, fNeg | fPast},
	{"took_too_much", LevelCrisis, 9, "self|my & took & toomuch|onpurpose", "routine|benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"meds_kicking_in", LevelCrisis, 7, "med|toomuch & kickin", "question|safe|recovery|" + vetoCommon, fNeg | fPast},
	{"harm_done", LevelCrisis, 1, "harmdone", "question|idiom|" + vetoCommon, fNeg | fPast},
	{"blade_in_body", LevelCrisis, 9, "weapon & body & my|now|blood", "benign|question|" + vetoCommon, fNeg | fPast},
	{"head_banging", LevelCrisis, 8, "headbang & cantstop|blood|now", "question|" + vetoCommon, fNeg | fPast},
	{"platform_edge", LevelCrisis, 8, "self & platform", "benign|question|" + vetoCommon, fNeg | fPast},
	{"crash_car", LevelCrisis, 12, "self & intent|now & crash & crashtarget|water|tracks|perch", "question|" + vetoCommon, fNeg | fPast},
	{"crash_intent", LevelElevated, 9, "self & intent|now & crash", "benign|question|" + vetoCommon, fNeg},
	{"breathing_fumes", LevelCrisis, 9, "self & breathe & fumes|poison", "question|safe|" + vetoNoCook, fNeg | fPast},
	{"poison_closed", LevelCrisis, 8, "poison & enclosed", "question|safe|benign|" + vetoNoCook, fNeg | fPast},
	{"selfharm_now", LevelCrisis, 9, "self|me & selfharm|cutword & now|blood|where|athand", "idiom|question|past|benign|illness|" + vetoCommon, fNeg},
	// "i cut myself and it won't stop bleeding": an act just done, whatever the tense
	{"bleeding_wont_stop", LevelCrisis, 10, "selfharm|cutword & blood & cantstop", "idiom|question|cook|benign|sport|fiction|news|code", 0},
	// "i just want the pain to stop", "je veux que la douleur s'arrête"
	{"pain_stop", LevelElevated, 6, "want & distress & end", "laugh|benign|illness|body|mybody|cook|sport|fiction|news|code|work", 0},
	{"blood_much", LevelCrisis, 7, "blood & amount|now", "idiom|question|benign|mundane|" + vetoCommon, fNeg | fPast},
	{"at_edge", LevelCrisis, 7, "self & edge", "idiom|benign|question|" + vetoCommon, fNeg | fPast},
	{"on_rails", LevelCrisis, 7, "self & rail", "benign|question|" + vetoCommon, fNeg | fPast},
	{"posture_rails", LevelCrisis, 4, "where & where & rail", "benign|question|mundane|" + vetoCommon, fNeg | fPast},
	{"at_perch", LevelElevated, 9, "self & where & perch", "benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"jump_bare", LevelCrisis, 3, "intent|want & jump!in,on,into,at,to,up,around,ahead,back,the,a,rope,ship,start,queue,over,through,for,with,en,sur,dans,auf,ins,de,del,al,aus,von,vom", "benign|sport|idiom|question|" + vetoCommon, fNeg | fPast},
	{"height_now", LevelCrisis, 9, "self & height|perch|balcony|edge & now|intent|die|selfkill|final|jump", "idiom|benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"balcony_high", LevelCrisis, 9, "self & balcony & bignum|edge", "benign|question|" + vetoCommon, fNeg | fPast},
	{"into_water", LevelCrisis, 9, "self & into & water", "benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"in_front", LevelCrisis, 7, "self & infront", "midtime|idiom|benign|question|" + vetoCommon, fNeg | fPast},
	{"fumes_closed", LevelCrisis, 14, "fumes & enclosed", "benign|question|safe|" + vetoNoCook, fNeg | fPast},
	{"fumes_sealed", LevelCrisis, 14, "enclosed & fumes & enclosed", "question|safe|" + vetoNoCook, fNeg | fPast},
	// ---- danger from others ----
	{"hit_me", LevelCrisis, 9, "other|partner|family|friend|adult & hit & me", "soft|laugh|idiom|question|benign|" + vetoNoCook, fNeg | fPast},
	{"followed_me", LevelCrisis, 1, "followme", "social|pet|laugh|question|" + vetoCommon, fNeg | fPast},
	{"threat_me", LevelCrisis, 9, "told|threatverb & threat", "mundane|laugh|idiom|" + vetoCommon, fNeg | fPast},
	// "my boyfriend is going to kill me", "mi novio me va a matar": a
	// partner's threat with no word of a mishap or a joke is ambiguous
	// (the idiom is a parent's or a boss's), so elevated
	{"partner_threat", LevelElevated, 6, "partner & threat", "mundane|laugh|idiom|" + vetoCommon, fNeg | fPast},
	{"violence_now", LevelCrisis, 9, "other|family|partner|adult & hit & now", "soft|laugh|idiom|question|benign|" + vetoNoCook, fNeg | fPast},
	{"hit_body", LevelCrisis, 9, "other|partner|family|friend|adult & hit & mybody", "soft|laugh|idiom|question|benign|" + vetoNoCook, fNeg | fPast},
	{"victim", LevelCrisis, 1, "victim", "soft|laugh|idiom|question|" + vetoCommon, fNeg | fPast},
	{"hit_me_near", LevelElevated, 2, "me & hit", "sport|soft|laugh|idiom|question|benign|" + vetoCommon, 0},
	{"hit_me_help", LevelCrisis, 9, "me & hit & now|help|fear|locked", "soft|laugh|idiom|question|benign|" + vetoNoCook, fNeg | fPast},
	{"bruises", LevelCrisis, 9, "bruises & family|partner|adult|other", "sport|benign|question|" + vetoCommon, fNeg | fPast},
	{"weapon_outside", LevelCrisis, 7, "weapon & outside|breakin", "benign|question|" + vetoCommon, fNeg | fPast},
	{"weapon_other", LevelCrisis, 9, "other|partner|family|adult & weapon & outside|breakin|me|threat", "benign|question|" + vetoCommon, fNeg | fPast},
	{"followed", LevelCrisis, 7, "follow & me", "social|pet|laugh|question|" + vetoCommon, fNeg | fPast},
	{"break_in", LevelCrisis, 7, "other|adult & breakin", "benign|question|" + vetoCommon, fNeg | fPast},
	{"hiding", LevelCrisis, 9, "self & hidingplace & other|partner|family|gettingin|outside|hit", "eat|edbehav|substance|benign|question|" + vetoCommon, fNeg | fPast},
	{"touched", LevelCrisis, 9, "family|adult|other|partner & touch & me", "benign|question|" + vetoCommon, fNeg | fPast},
	{"locked_in", LevelCrisis, 9, "family|partner & locked & me", "benign|question|" + vetoCommon, fNeg | fPast},
	// ---- someone else in danger ----
	{"other_farewell", LevelCrisis, 10, "friend|family|partner|other & farewell", "benign|" + vetoCommon, fNeg},
	{"other_kill_now", LevelCrisis, 9, "friend|family|partner|other & otherkill & now|soon|intent|final|weapon|med", "benign|question|" + vetoCommon, fNeg | fPast},
	{"other_height_now", LevelCrisis, 9, "friend|family|partner|other & perch|edge|height & now|intent|die|jump", "benign|question|idiom|" + vetoCommon, fNeg | fPast},
	{"other_unreachable", LevelCrisis, 20, "friend|family|partner & farewell|goodbye & unreachable", "benign|" + vetoCommon, 0},
	{"other_weapon_done", LevelCrisis, 9, "friend|family|partner & weapon & end|otherkill", "benign|question|" + vetoCommon, fNeg | fPast},
	{"other_harm_now", LevelCrisis, 9, "friend|family|partner|other & selfharm|otherharm & now", "benign|question|" + vetoCommon, fNeg | fPast},
	// ---- method ----
	{"method_question", LevelCrisis, 14, "question|way & lethal|die|kill|suicide|painful|nowake|survived & med|rope|noose|perch|height|weapon|poison|blood|fumes|rail|water|way|amount|bignum|tracks|lethal|cutword|body|selfharm",
		"safekeep|safe|" + vetoCommon, fAsksHow},
	{"noose", LevelCrisis, 7, "question|self|my & noose", "benign|" + vetoCommon, fNeg | fPast},
	{"lethal_dose", LevelCrisis, 7, "lethal & med|poison|amount", "safekeep|safe|" + vetoCommon, 0},
	{"lethal_means", LevelCrisis, 7, "lethal|painful & fumes|poison|med|rope|noose|perch|rail|weapon", "safekeep|safe|" + vetoCommon, 0},
	{"method_how", LevelCrisis, 7, "question|way & overdosed|selfkill|suicide", "safekeep|safe|" + vetoCommon, 0},
	{"method_way", LevelCrisis, 7, "way & die|kill", "idiom|safe|work|mundane|" + vetoCommon, fOther},
	{"pills_no_wake", LevelElevated, 9, "question & med & neg & wake", "safe|" + vetoCommon, 0},
	{"method_cut", LevelCrisis, 9, "question & cutword|selfharm & blood|body", "safekeep|safe|benign|" + vetoCommon, 0},
	{"what_if_took", LevelCrisis, 10, "question & took & med|toomuch & amount|toomuch", "safekeep|safe|" + vetoCommon, 0},
	// ---- preparation ----
	{"took_weapon", LevelCrisis, 9, "self|my & took & weapon|noose", "benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"gathering_means", LevelCrisis, 9, "self|my & gather & med|weapon|rope|noose|poison", "benign|question|safe|safekeep|" + vetoCommon, fNeg | fPast},
	// "bought a rope today, it's in the car for later": means got, no "i"
	{"means_got", LevelElevated, 8, "gather & rope|noose|weapon|poison & now|soon", "benign|question|safe|safekeep|routine|work|mundane|" + vetoCommon, fNeg},
	{"means_at_hand", LevelCrisis, 7, "med|weapon|rope|noose|poison & athand", "benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"rehearsal", LevelCrisis, 10, "rehearse & rope|noose|weapon|med|perch|edge|rail|neck|blood", "benign|question|fiction|news|code|cook", fNeg | fPast},
	{"around_neck", LevelCrisis, 7, "rope|noose & neck", "benign|" + vetoCommon, fNeg | fPast},
	{"farewell", LevelCrisis, 10, "farewell", "seeyou|work|benign|" + vetoCommon, fNeg},
	{"giving_away", LevelCrisis, 12, "giveaway|settled & final|after|gone", "benign|question|news|code|cook|sport", fPast},
	{"arranging_care", LevelCrisis, 12, "care|pet|child & after|final", "benign|question|" + vetoCommon, fPast},
	// ---- ideation ----
	{"kill_self", LevelCrisis, 1, "selfkill", "idiom|mundane|" + vetoCommon, fNeg | fPast | fOther},
	// "nach dem training bring ich mich um": an everyday word beside a
	// first-person killing of oneself does not explain it away (the rules
	// tier does the same, detector.go): elevated, never none. Only an idiom,
	// a story, the news or code clears it; negatives.go explains the
	// hyperboles it does ("me mato a estudiar").
	{"kill_self_everyday", LevelElevated, 1, "selfkill", "idiom|mundane|fiction|news|code", fOwnAct},
	{"intent_suicide", LevelCrisis, 7, "want|intent|think & suicide", "idiom|" + vetoCommon, fNeg | fPast | fSpeaker | fOther},
	{"resolve", LevelCrisis, 10, "resolve & do|selfkill|die|suicide", "benign|" + vetoCommon, 0},
	{"do_it_soon", LevelElevated, 7, "do & now|soon|intent", "mundane|benign|work|request|consent|" + vetoCommon, fNeg},
	// "ok, i'm going to do it tonight": consent words do not veto a
	// first-person "do it"
	{"self_do_it_soon", LevelElevated, 7, "self & do & now|soon|intent", "mundane|benign|work|request|" + vetoCommon, fNeg},
	{"gone_soon", LevelCrisis, 7, "gone & now|soon|final", "safe|safekeep|question|temporary|benign|work|" + vetoCommon, fPast},
	{"know_how", LevelCrisis, 7, "knowhow & do|final|soon|now", "benign|work|question|" + vetoCommon, fNeg},
	{"use_means", LevelCrisis, 9, "intent & use & weapon|med|rope|noose|poison", "benign|question|safe|" + vetoCommon, fNeg | fPast},
	{"chose_place", LevelCrisis, 9, "self & chose & perch|rail|noose", "benign|question|" + vetoCommon, fNeg | fPast},
	{"chose_date", LevelElevated, 7, "self & chose & when", "benign|question|" + vetoCommon, fNeg | fPast},
	{"letters_family", LevelElevated, 9, "self|my & goodbye & family|everyone|love", "seeyou|benign|oneletter|" + vetoCommon, fNeg | fPast},
	{"want_end_final", LevelElevated, 9, "want & end & final", "benign|mundane|work|" + vetoCommon, fNeg | fPast},
	{"tall_place", LevelElevated, 9, "question & tall & perch", "benign|" + vetoCommon, 0},
	{"want_die", LevelCrisis, 7, "want|intent & die|betterdead!laughing,inside", "idiom|" + vetoCommon, fNeg | fPast | fSpeaker | fOther},
	// Thoughts of death are not yet a wish to die (C-SSRS): a card, not
	// an emergency ("i think about death a lot lately").
	{"think_death", LevelElevated, 7, "think & die|betterdead!laughing,inside", "idiom|" + vetoCommon, 0},
	{"better_dead", LevelCrisis, 1, "betterdead", "idiom|" + vetoCommon, fNeg | fPast | fOther},
	{"not_live", LevelCrisis, 9, "neg!de,du,des,d & want|intent & life!in,at,with,near,there,alone,together,like,on,en,con,cerca,ahi,alli,dans,avec,pres,a,mit,bei,dort,allein,zusammen,so,ici,aqui,hier", "idiom|question|" + vetoCommon, fOther},
	{"relief_die", LevelCrisis, 9, "die & relief", "idiom|question|" + vetoCommon, fNeg | fOther},
	{"goodbye_everyone", LevelCrisis, 9, "self|my & goodbye & everyone", "benign|work|" + vetoCommon, fNeg | fPast},
	{"keeping_here", LevelCrisis, 1, "keepinghere", "" + vetoCommon, 0},
	{"think_jump", LevelCrisis, 9, "think & jump|crash", "benign|sport|" + vetoCommon, fNeg | fPast},
	{"research_method", LevelCrisis, 9, "research & way|do & die|kill|suicide|selfkill|overdosed", "benign|" + vetoCommon, fNeg | fPast},
	{"research_how", LevelElevated, 7, "research & way|do", "benign|work|" + vetoCommon, fNeg | fPast},
	{"guardian_now", LevelCrisis, 9, "care & child & now", "newlife|benign|" + vetoCommon, fNeg | fPast},
	{"death_good", LevelCrisis, 1, "deathgood", "idiom|" + vetoCommon, fNeg},
	{"hope_die", LevelCrisis, 7, "want|indifferent|betteroff & hopedie", "idiom|" + vetoCommon, fNeg},
	{"stop_living", LevelCrisis, 9, "want & end & life!in,at,with,near,there,like,en,con,dans,avec,mit,bei", "idiom|question|benign|" + vetoCommon, fNeg | fPast | fOther},
	{"indifferent_live_die", LevelCrisis, 9, "indifferent & life & die", "idiom|question|" + vetoCommon, fPast},
	{"life_not_worth", LevelCrisis, 7, "notworth & life", "idiom|question|" + vetoCommon, fPast},
	{"never_born", LevelCrisis, 1, "neverborn", "idiom|" + vetoCommon, fPast},
	{"hope_not_wake", LevelCrisis, 9, "want & wake & neg", "mundane|wakeother|mundane|idiom|question|" + vetoCommon, fPast},
	{"no_wake", LevelCrisis, 7, "nowake & want|self|neg|intent", "benign|idiom|mundane|wakeother|question|" + vetoCommon, fPast},
	// ---- arranging care, goodbyes, plans (issue 13: the weak categories) ----
	{"rehoming", LevelCrisis, 14, "rehome|care & after|final", "temporary|seeyou|benign|" + vetoCommon, fPast},
	{"rehoming_pretext", LevelElevated, 16, "rehome|care|pet|child & pretext", "" + vetoCommon, 0},
	{"goodbye_three", LevelCrisis, 16, "goodbye & goodbye & goodbye|love|final|farewell", "seeyou|benign|work|temporary|laugh|" + vetoCommon, fNeg},
	{"goodbye_pair", LevelElevated, 12, "goodbye & goodbye|love|final", "seeyou|benign|work|temporary|laugh|" + vetoCommon, 0},
	{"goodbye_gone", LevelCrisis, 12, "goodbye|farewell & gone|after!to,on,out,home,back,for,into,shopping,with,and,a,the,al,en,au,nach,zur,zum,de,a", "seeyou|benign|work|temporary|" + vetoCommon, fNeg},
	{"plan_means", LevelCrisis, 12, "plan|knowhow & med|rope|noose|weapon|poison|fumes|perch|rail|selfkill|suicide|do|unnoticed|gone|final", "mundane|benign|work|" + vetoCommon, fNeg | fPast},
	{"plan_when", LevelCrisis, 12, "plan|chose|intent & when|soon & do|unnoticed|gone|final", "mundane|benign|work|temporary|" + vetoCommon, fNeg | fPast},
	{"do_unnoticed", LevelCrisis, 16, "do|intent|plan|resolve|chose & unnoticed", "mundane|work|" + vetoCommon, fNeg | fPast},
	{"ruin_do", LevelElevated, 12, "ruin & do|after|gone|soon", "benign|work|" + vetoCommon, 0},
	{"last_alive", LevelCrisis, 1, "thenight", "benign|sport|laugh|seeyou|" + vetoCommon, fNeg},
	{"no_burden_soon", LevelCrisis, 10, "noburden & now|soon|after|final", "benign|" + vetoCommon, 0},
	{"no_burden", LevelElevated, 1, "noburden", vetoCommon, 0},
	// ---- means, acts ----
	// means on their way, with no "i" ("ordered a gun online, it arrives
	// thursday"): elevated, crisis with a final cue ("gun gets delivered
	// tomorrow and then it's over")
	{"means_coming", LevelElevated, 9, "ordered & weapon|rope|noose|poison & soon|when", "safe|routine|benign|question|safekeep|work|mundane|" + vetoCommon, fNeg | fPast},
	{"means_coming_final", LevelCrisis, 12, "ordered & weapon|rope|noose|poison & final|gone|do", "safe|routine|benign|question|safekeep|work|mundane|" + vetoCommon, fNeg | fPast},
	// a risk question reported and answered yes ("the doctor asked if i
	// had a plan, i said yes, friday")
	{"reported_yes", LevelCrisis, 14, "askedrisk & saidyes", "fiction|news|code", fPast},
	{"means_unnoticed", LevelCrisis, 14, "gather|acquire & med|weapon|rope|noose|poison|fumes & unnoticed|notfor|amount|athand", "safe|routine|benign|safekeep|illness|question|" + vetoCommon, fPast},
	{"fumes_symptom", LevelCrisis, 14, "fumes|poison & symptom|unlit", "question|safe|safekeep|benign|" + vetoNoCook, fNeg | fPast},
	{"took_meds_now", LevelCrisis, 12, "took & med|toomuch & amount|bignum|toomuch & now|symptom|kickin", "routine|question|safe|safekeep|illness|" + vetoCommon, fNeg | fPast},
	{"unconscious_means", LevelCrisis, 12, "unconscious & med|amount|blood|fumes|poison|farewell|goodbye", "question|safe|safekeep|fiction|news", 0},
	// ---- danger from others, someone else in danger ----
	{"secret_abuse", LevelCrisis, 14, "family|adult|other|partner & hit|touch|locked & secret|fear", "benign|laugh|" + vetoNoCook, fNeg | fPast},
	{"sextortion", LevelCrisis, 14, "touch & expose", "fiction|news", fNeg},
	{"intrusion", LevelCrisis, 14, "family|adult|other|partner & intrude & touch|fear|secret|hit|dislike", "benign|laugh|" + vetoNoCook, fNeg | fPast},
	{"other_unreachable_means", LevelCrisis, 14, "friend|family|partner|other & med|farewell|goodbye|selfharm|otherharm|perch|rail|weapon|locked|fumes & unreachable", "benign|temporary|" + vetoCommon, 0},
	{"scouted_place", LevelCrisis, 9, "scout & perch|rail|tall|height|edge", "benign|work|sport|" + vetoCommon, fNeg | fPast},
	{"fear_of_hitting", LevelCrisis, 12, "fear & family|partner|other|adult & hit|threat", "laugh|idiom|soft|" + vetoNoCook, fNeg | fPast},
	{"neglected", LevelCrisis, 9, "family|adult|partner|other & neglect", "illness|benign|" + vetoCommon, fNeg | fPast},
	{"other_harming", LevelElevated, 9, "friend|family|partner|other & otherharm|otherkill", "fiction|news|sport|code|cook", 0},
	{"loss_despair", LevelElevated, 14, "grief|otherkill & distressp|hopelessp|cantlive|shouldbeme|joinlost", "fiction|news|sport|work|code|cook", 0},
	{"explain_why", LevelElevated, 12, "family|friend|partner|goodbye|told|sent & whyidid", "fiction|news|benign|work", 0},
	{"not_exist", LevelElevated, 1, "noexist", "fiction|news|code|laugh", 0},
	{"want_not_exist", LevelCrisis, 7, "want|intent & noexist", "fiction|news|code|laugh", fNeg | fPast | fSpeaker},
	{"all_i_need", LevelElevated, 1, "allineed", "benign|work|temporary|cook|sport|code|fiction|news|treat|safe", 0},
	{"stalker_outside", LevelCrisis, 12, "follow & outside|breakin", "social|pet|laugh|question|" + vetoCommon, fNeg | fPast},
	{"place_then_over", LevelCrisis, 12, "soon|plan & perch|rail|tracks|med|rope|noose|weapon|fumes & over|final|gone", "benign|work|sport|temporary|" + vetoCommon, fNeg | fPast},
	{"letters_left", LevelElevated, 10, "goodbye & stored", "benign|work|cook|" + vetoCommon, 0},
	{"the_day_resolved", LevelCrisis, 12, "thenight|soon & resolve", "benign|work|sport|laugh|" + vetoCommon, fNeg},
	{"future_means", LevelElevated, 9, "intent & took|use & med|rope|weapon|noose|poison & soon|now", "routine|safe|illness|question|safekeep|" + vetoCommon, fNeg},
	{"pretext_denied", LevelCrisis, 16, "rehome|care|pet|child & pretextneg", "" + vetoCommon, fNeg},
	{"shared_out", LevelElevated, 14, "rehome|care|giveaway & rehome|care|giveaway", "temporary|benign|work|" + vetoCommon, 0},
	{"end_it_soon", LevelCrisis, 8, "intent|want & endit!with,between,here,at,con,avec,mit & soon|now|final|resolve", "breakup|work|mundane|sport|code|cook|fiction|news|laugh|seeyou|temporary", fNeg | fPast},
	{"enough_at_hand", LevelCrisis, 12, "enough & athand|gather", "safe|routine|safekeep|illness|question|" + vetoCommon, fNeg | fPast},
	{"enough", LevelElevated, 1, "enough", "safe|routine|safekeep|illness|benign|work|cook|" + vetoCommon, 0},
	{"unnoticed_soon", LevelElevated, 12, "unnoticed & soon|now", "benign|work|laugh|" + vetoCommon, 0},
	{"plan_soon", LevelElevated, 10, "plan & soon|when", "benign|work|temporary|mundane|" + vetoCommon, 0},
	{"wanted_goodbye", LevelElevated, 6, "want & goodbye", "benign|work|seeyou|temporary|cook|laugh|" + vetoCommon, 0},
	{"other_said_kill_soon", LevelCrisis, 12, "friend|family|partner & told & kill|selfkill|suicide|otherkill & now|soon", "idiom|laugh|" + vetoCommon, fNeg | fPast},
	{"other_wants_die", LevelElevated, 9, "friend|family|partner & want|told & die|selfkill|suicide|betterdead", "idiom|laugh|" + vetoCommon, 0},
	{"selfharm_urge", LevelElevated, 1, "shurge", "laugh|" + vetoCommon, 0},
	{"other_means_goodbye", LevelCrisis, 12, "friend|family|partner|other & rope|noose|med|weapon & goodbye|farewell", "benign|safe|safekeep|question|" + vetoCommon, fNeg | fPast},
	// "my son texted that he's sorry and loves me, and his location is at
	// the station": two farewell words from someone at a dangerous place
	{"other_goodbye_place", LevelCrisis, 16, "friend|family|partner|other & goodbye|farewell & goodbye|love|farewell & perch|rail|tracks|water|height", "mundane|seeyou|temporary|benign|safe|question|" + vetoCommon, fNeg},
	{"other_locked_means", LevelCrisis, 10, "friend|family|partner|other & locked|hidingplace & med|weapon|rope|noose|fumes|poison", "benign|safe|safekeep|question|" + vetoCommon, fNeg | fPast},
	// ---- round 5: scenes, settling affairs, danger now (issue 13) ----
	// a rope at a fixture, or someone standing on a chair with one
	{"rope_scene", LevelCrisis, 16, "rope|noose & fixture|standon", "benign|question|fiction|news|code|cook", fNeg | fPast},
	{"rail_timing", LevelCrisis, 16, "rail & timing", "routine|mundane|benign|work|question|" + vetoCommon, fNeg | fPast},
	{"surrounded_now", LevelCrisis, 16, "surrounded & other|holding|weapon|threat|fear|now", "benign|laugh|social|" + vetoNoCook, fNeg | fPast},
	{"surrounded", LevelElevated, 1, "surrounded", "benign|laugh|social|" + vetoNoCook, 0},
	{"rampage_coming", LevelCrisis, 16, "family|partner|other|adult & rampage|substance & comingtome", "benign|laugh|" + vetoNoCook, fNeg | fPast},
	{"groomed_secret", LevelCrisis, 24, "adult|family|other|partner & alonewith & secret", "benign|laugh|fiction|news|code", fNeg | fPast},
	{"means_to_end", LevelCrisis, 8, "med|rope|weapon|poison|noose|fumes & toendit", "question|safekeep|fiction|news|code", fNeg | fPast},
	{"settled_after", LevelCrisis, 24, "settled|giveaway|care|pet|rehome|farewell & aftermath", "temporary|question|fiction|news", fPast},
	{"aftermath", LevelElevated, 1, "aftermath", "benign|work|mundane|temporary|routine|question|" + vetoCommon, 0},
	{"scheduled_findme", LevelCrisis, 16, "scheduled|sent|goodbye|farewell|plan & findme", "benign|question|fiction|news|sport", fNeg},
	{"attempt_same_now", LevelElevated, 20, "attempt|triedbefore|selfkill|suicide|overdosed|med & samenow", "fiction|news|sport|cook|work|code", 0},
	{"controlled_alone", LevelElevated, 1, "controlp", "fiction|news|laugh", 0},
	// ---- elevated concerns: a card, not an emergency ----
	{"controlled", LevelElevated, 10, "partner|other|friend & control", "code|sport|benign|laugh|fiction|news|safe|cook", 0},
	{"controls_me", LevelElevated, 6, "partner|other|friend & control & me|self", "code|sport|laugh|fiction|news|safe|cook", 0},
	{"partner_fear", LevelElevated, 6, "partner & fear", "laugh|fiction|news|sport|benign", 0},
	{"eating_behaviour", LevelElevated, 1, "edbehav!watch,watching,watched,the,my,old,all,netflix,series,show", "illness|fiction|news|cook|sport|code", 0},
	{"substance_loss", LevelElevated, 12, "substance & lossctl|cantstop|toomuch", "treat|recovery|fiction|news|cook|sport|benign|code", 0},
	{"attempt_hospital", LevelElevated, 12, "hospital|lastfelt & attempt|overdosed|selfkill|suicide|med|die", "fiction|news|code|sport|benign|role", 0},
	{"my_attempt", LevelElevated, 2, "my & attempt!at,to,a,an,de,bei,zu,of,on", "sport|work|cook|benign|code|" + vetoCommon, 0},
	{"survived_attempt", LevelElevated, 6, "survived & attempt|overdosed|suicide|selfkill", "fiction|news|sport", 0},
	{"last_felt", LevelElevated, 1, "lastfelt", "fiction|news|laugh", 0},
	{"burden_phrase", LevelElevated, 1, "burdenp", "fiction|news|laugh|work|code|sport|cook", 0},
	{"hopeless_phrase", LevelElevated, 1, "hopelessp", "fiction|news|code|cook|sport|work|laugh", 0},
	{"grief_despair", LevelElevated, 14, "grief & hopeless|hopelessp|cantlive|shouldbeme|joinlost", "fiction|news|sport|work|code|cook", 0},
	{"should_be_me", LevelElevated, 1, "shouldbeme", "fiction|news|sport|laugh", 0},
	{"cant_live_without", LevelElevated, 6, "cantlive & grief|family|partner|friend|child|other|pet", "treat|laugh|fiction|news", 0},
	// ---- elevated concerns ----
	{"distress_phrase", LevelElevated, 1, "distressp", "fiction|news|laugh|code|sport|cook|mundane|idiom", 0},
	{"blackout", LevelElevated, 1, "blackout", "fiction|news|illness|laugh", 0},
	{"relapsed", LevelElevated, 1, "relapse", "fiction|news|illness", 0},
	{"nobody_miss_me", LevelElevated, 4, "neg & missme", "temporary|benign|fiction|news|laugh", 0},
	{"addiction", LevelElevated, 4, "self|my|me & addicted", "treat|fiction|news|laugh|sport|code|recovery", 0},
	{"tried_before", LevelElevated, 1, "triedbefore", "cook|sport|work|code|benign|fiction|news|laugh", 0},
	{"past_attempt", LevelElevated, 9, "self|my & attempt & suicide|selfkill|overdosed|kill|die|life", "idiom|benign|fiction|news", 0},
	{"burden", LevelElevated, 7, "self|my|me & burden", "question|" + vetoCommon, 0},
	// "everyone would be better off without me", "ohne mich wären alle besser dran"
	{"better_without_me", LevelElevated, 7, "withoutme & betteroff", "question|benign|treat|" + vetoCommon, 0},
	{"only_way", LevelCrisis, 8, "suicide|die|selfkill|kill & onlyway", "idiom|question|" + vetoCommon, fNeg | fPast | fOther},
	{"took_every_now", LevelCrisis, 10, "took & allmeds & now|symptom|kickin", "routine|question|safe|safekeep|illness|" + vetoCommon, fNeg | fPast},
	{"accident_wish", LevelCrisis, 10, "accidentme & relief|indifferent|want|deathgood", "question|news|fiction|laugh|" + vetoCommon, fNeg | fPast},
	{"want_disappear", LevelElevated, 6, "want|think|self & disappear", "benign|cook|sport|code|fiction|news|laugh|work|pet", 0},
	{"other_not_here", LevelElevated, 10, "friend|family|partner|other & notbehere", "benign|work|temporary|seeyou|fiction|news|laugh", 0},
	{"cry_daily", LevelElevated, 8, "self & cry & routine|lossctl", "laugh|benign|cook|sport|fiction|news|child|mild", 0},
	{"other_not_eating", LevelElevated, 6, "friend|family|partner|child & noteat", "illness|benign|pet|cook|fiction|news|temporary", 0},
	// purging: "i made myself throw up after dinner", "ich kotz nach dem essen"
	{"eat_purge", LevelElevated, 8, "self|me & eat & vomit", "illness|question|benign|" + vetoCommon, 0},
	// restricting: "i skip breakfast and lunch", "me salto la comida y la cena"
	{"skip_meals", LevelElevated, 8, "self & skipmeal & meal & meal|exercise", "illness|question|benign|work|temporary|" + vetoCommon, 0},
	{"selfharm", LevelElevated, 7, "self|my|me & selfharm", "idiom|benign|question|" + vetoCommon, 0},
	// ---- round 6 (issue 13, set 4): behaviours named in their own words ----
	// self-injury other than cutting, with what it leaves or what drives it
	// ("je me griffe les bras jusqu'au sang quand je panique", "ich schlag
	// mir auf die oberschenkel bis sie blau sind"); nail-biting leaves no mark
	{"self_injury", LevelElevated, 10, "selfinjure & injurymark|routine|lossctl|cantstop|shtrigger|again|body", "idiom|laugh|sport|illness|" + vetoCommon, 0},
	// a blade taken out under pressure ("der druck ist wieder da, hab die
	// klinge schon aus der schublade geholt")
	{"blade_out", LevelElevated, 12, "weapon & fetched & shtrigger|shurge|distress|selfharm", "cook|work|benign|laugh|" + vetoCommon, 0},
	// counting calories beside hating the body or burning them off
	{"ed_calories", LevelElevated, 12, "calcount & bodyhate|exercise|skipmeal|vomit", "cook|question|illness|benign|" + vetoCommon, 0},
	// binge and purge with no "i" ("crise de boulimie puis vomi, presque
	// tous les jours")
	{"binge_purge", LevelElevated, 16, "eat & vomit & routine|lossctl|secret|again|cantstop", "illness|cook|laugh|fiction|news|code", 0},
	// gambling's loss of control: debt, money taken, can't stop
	{"gambling_loss", LevelElevated, 14, "gamble & moneygone|lossctl|cantstop|secret|again|addicted", "recovery|past|laugh|question|news|code", 0},
	// medicine got round the prescriber, or far more of it
	{"med_misuse", LevelElevated, 16, "med & illicit", "question|illness|recovery|laugh|fiction|news|code", 0},
	// ---- round 6: danger from others, heard or at the door ----
	{"heard_harm", LevelCrisis, 14, "heardharm & heardharm|hit|fear|threat", "laugh|benign|" + vetoNoCook, fNeg | fPast},
	{"trapped", LevelCrisis, 14, "blockdoor & blockdoor|aggressive|threat|hit|fear|locked|help", "mundane|work|laugh|benign|" + vetoNoCook, fNeg | fPast},
	// a threat beside a weapon, in the kitchen too ("dijo que si lo dejo me
	// mata y está afilando un cuchillo", "il a sorti le fusil et il menace")
	{"threat_weapon", LevelCrisis, 16, "threat|threatverb & weapon", "laugh|idiom|benign|" + vetoNoCook, fNeg | fPast},
	{"drink_spiked", LevelCrisis, 1, "spiked", "laugh|fiction|news|code", fNeg | fPast},
	{"strangled", LevelCrisis, 1, "strangled", "laugh|idiom|sport|question|fiction|news|code", fNeg | fPast},
	// someone driving drunk or raging says he'll crash with the children
	{"threat_crash", LevelCrisis, 14, "family|partner|adult|other & told|intent & crash & child|me|family", "benign|question|idiom|laugh|" + vetoCommon, fNeg | fPast},
	// ---- round 6: methods named in a plan or a scene ----
	{"jump_unnoticed", LevelCrisis, 16, "jump & unnoticed", "benign|sport|laugh|" + vetoCommon, fNeg | fPast},
	{"jump_place_soon", LevelCrisis, 18, "perch|height|tall & jump & soon|now|intent", "benign|sport|laugh|social|water|" + vetoCommon, fNeg | fPast},
	{"step_in_front", LevelCrisis, 10, "stepfront|infront & vehicle & intent|plan|want|soon|self", "benign|idiom|laugh|work|" + vetoCommon, fNeg | fPast},
	{"means_on_self", LevelCrisis, 16, "weapon|med|rope|noose|poison & onmyself", "benign|question|safe|laugh|" + vetoCommon, fNeg | fPast},
	{"scout_rope", LevelCrisis, 16, "scout & rope|noose|fixture", "benign|work|sport|" + vetoCommon, fNeg | fPast},
	{"rehome_deadline", LevelElevated, 16, "pet|child & cantkeep & soon|when", "temporary|work|laugh|" + vetoCommon, 0},
	// things given away under a cover story ("told my friend she can have my
	// guitar, she thinks i'm moving"): crisis when the cover is denied
	{"giveaway_pretext", LevelElevated, 16, "giveaway & pretext", "work|laugh|" + vetoCommon, 0},
	{"giveaway_pretext_denied", LevelCrisis, 16, "giveaway & pretextneg", "work|laugh|" + vetoCommon, 0},
	// "ich mach morgen schluss, endgültig": an end made final, soon, by the
	// speaker; elevated, as a break-up says the same
	{"end_final_soon", LevelElevated, 8, "self & intent & end!mit,with,con,avec & final & soon|now", "breakup|benign|work|mundane|sport|cook|laugh|fiction|news|code|temporary", 0},
	{"suicide_self", LevelElevated, 7, "self|my|me & suicide", "" + vetoCommon, 0},
}

// frame is a compiled frameDef.
type frame struct {
	def   *frameDef
	slots []frameSlot
	veto  cset
	// vetoGlobal is the part of veto that holds anywhere in the utterance;
	// vetoLocal (everyday words) vetoes a long turn only near the match.
	vetoGlobal, vetoLocal cset
	// reason ids, built once: "frame.id" and its lowered forms
	reason, negated, past, other string
}

type frameSlot struct {
	c       cset
	nextNot map[string]bool
}

var frames, framesErr = compileFrames(frameDefs)

// frameSlotIndex lists, for every concept, the frames with a slot that
// takes it and which slots (a bit per slot), so matchFrames meets only
// the frames each of whose slots some word of the utterance can fill
// instead of testing all of them (most utterances leave a handful).
var frameSlotIndex, frameSlotsFull = indexFrameSlots(frames)

type frameSlotRef struct {
	frame int
	slots uint8
}

// maxIndexedFrames bounds the per-utterance slot bits kept on the stack;
// with more frames matchFrames tests every frame, as without the index.
const maxIndexedFrames = 512

func indexFrameSlots(fs []frame) ([][]frameSlotRef, []uint8) {
	idx := make([][]frameSlotRef, csetWords*64)
	full := make([]uint8, len(fs))
	for fi := range fs {
		for k := range fs[fi].slots {
			if k >= 8 {
				break // matchFrames skips such frames (pos holds 8)
			}
			full[fi] |= 1 << k
			fs[fi].slots[k].c.each(func(c int) {
				if n := len(idx[c]); n > 0 && idx[c][n-1].frame == fi {
					idx[c][n-1].slots |= 1 << k
				} else {
					idx[c] = append(idx[c], frameSlotRef{fi, 1 << k})
				}
			})
		}
	}
	return idx, full
}

// compileFrames compiles defs. A malformed frame is skipped and reported
// in the error rather than dropping every frame: the others still protect
// people (the detector's Err reports it; TestConceptTable keeps the table
// clean).
func compileFrames(defs []frameDef) ([]frame, error) {
	out := make([]frame, 0, len(defs))
	ids := map[string]bool{}
	var errs []error
	for i := range defs {
		d := &defs[i]
		if ids[d.id] {
			errs = append(errs, fmt.Errorf("safety: duplicate frame %s", d.id))
			continue
		}
		ids[d.id] = true
		var bad error
		f := frame{def: d, reason: "frame." + d.id, negated: "frame." + d.id + "/negated",
			past: "frame." + d.id + "/past", other: "frame." + d.id + "/third_party"}
		for _, s := range strings.Split(d.slots, "&") {
			s = strings.TrimSpace(s)
			var sl frameSlot
			if k := strings.IndexByte(s, '!'); k >= 0 {
				sl.nextNot = map[string]bool{}
				for _, w := range strings.Split(s[k+1:], ",") {
					sl.nextNot[squashWord(w)] = true
				}
				s = s[:k]
			}
			c, err := conceptSet(s)
			if err != nil {
				bad = fmt.Errorf("safety: frame %s: %w", d.id, err)
			}
			sl.c = c
			f.slots = append(f.slots, sl)
		}
		if d.veto != "" {
			c, err := conceptSet(d.veto)
			if err != nil {
				bad = fmt.Errorf("safety: frame %s veto: %w", d.id, err)
			}
			if c.has(benignID) {
				c.or(routeSet) // "on my way home" vetoes what benign vetoes
			}
			f.veto = c
			for i := range c {
				f.vetoLocal[i] = c[i] & localVetoSet[i]
				f.vetoGlobal[i] = c[i] &^ localVetoSet[i]
			}
		}
		if bad != nil {
			errs = append(errs, bad)
			continue
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

func conceptSet(alts string) (cset, error) {
	var c cset
	for _, n := range strings.Split(alts, "|") {
		i, ok := concepts.byName[strings.TrimSpace(n)]
		if !ok {
			return c, fmt.Errorf("unknown concept %q", n)
		}
		c.add(i)
	}
	return c, nil
}

// frameHit is the best frame match in one utterance.
type frameHit struct {
	level  Level
	reason string
}

var (
	negID      = conceptID("neg")
	pastID     = conceptID("past")
	questionID = conceptID("question")
	notforID   = conceptID("notfor")
	benignID   = conceptID("benign")
	routeSet   = mustSet("route")
)

// matchFrames runs every frame over toks and their concept sets and
// returns the highest level found (and calls hit for every frame that
// fired, for the model's frame features).
func matchFrames(toks []string, sets []cset, hit func(id string)) frameHit {
	var all cset
	for _, s := range sets {
		all.or(s)
	}
	// As a veto, "question" means the utterance opens with a question
	// word ("how many …", "so what …"), not any "what" in a statement.
	vetoAll := all
	vetoAll[questionID>>6] &^= 1 << uint(questionID&63)
	if all.has(notforID) {
		// "a rope, and it's not for camping": the ordinary purpose is denied
		vetoAll[benignID>>6] &^= 1 << uint(benignID&63)
	}
	for k := 0; k < len(sets) && k < 2; k++ {
		if sets[k].has(questionID) {
			vetoAll.add(questionID)
		}
	}
	var best frameHit
	var pos [8]int
	long := len(toks) > longTurnWords
	// filled: a bit per slot of every frame some word's concepts fit
	var filled [maxIndexedFrames]uint8
	indexed := len(frames) <= maxIndexedFrames && len(frameSlotsFull) == len(frames)
	if indexed {
		all.each(func(c int) {
			for _, r := range frameSlotIndex[c] {
				filled[r.frame] |= r.slots
			}
		})
	}
	for fi := range frames {
		f := &frames[fi]
		if len(f.slots) > len(pos) || indexed && filled[fi] != frameSlotsFull[fi] {
			continue // too many slots, or one no word can fill (f.match would fail)
		}
		local := false
		if vetoAll.any(f.veto) {
			if !long || vetoAll.any(f.vetoGlobal) {
				continue
			}
			local = true
		}
		if !f.match(toks, sets, all, pos[:len(f.slots)]) {
			continue
		}
		if local && vetoNear(sets, f.vetoLocal, pos[:len(f.slots)]) {
			continue
		}
		first := pos[0]
		for _, p := range pos[:len(f.slots)] {
			first = min(first, p)
		}
		if f.def.flags&fSpeaker != 0 && !speakerIsSubject(toks, 0, first) {
			continue
		}
		if f.def.flags&fOwnAct != 0 && subjectAfter(toks, first) {
			continue
		}
		if f.def.flags&fAsksHow != 0 && len(f.slots) > 1 && deathTold(toks, pos[1]) {
			continue
		}
		lvl, reason := f.def.level, f.reason
		if lvl == LevelCrisis {
			lo, hi := pos[0], pos[0]
			for _, p := range pos[:len(f.slots)] {
				lo, hi = min(lo, p), max(hi, p)
			}
			switch {
			case f.def.flags&fNeg != 0 && negatedFrame(toks, sets, lo, hi):
				lvl, reason = LevelElevated, f.negated
			case f.def.flags&fPast != 0 && (all.has(pastID) || triedBefore(toks, lo)):
				lvl, reason = LevelElevated, f.past
			case f.def.flags&fOther != 0 && otherSubject(toks, lo):
				lvl, reason = LevelElevated, f.other
			}
		}
		if f.def.flags&fOther != 0 && genericHypothetical(toks, sets, first) {
			continue
		}
		if hit != nil {
			hit(f.def.id)
		}
		if lvl > best.level {
			best = frameHit{lvl, reason}
		}
	}
	return best
}

// otherSubject is thirdParty, except that Spanish "he" before a participle
// is the speaker ("he decidido morir esta noche": I have decided).
func otherSubject(toks []string, start int) bool {
	for k := start - 1; k >= 0 && k >= start-6; k-- {
		t := toks[k]
		if firstPersonSubject[t] || t == clauseMark || spanishHe(toks, k) {
			return false
		}
		if thirdPartyWords[t] {
			return true
		}
	}
	return false
}

// genericHypothetical: the match is a conditional about people in general
// ("if they didn't want to live …", "si la gente no quisiera vivir", "wenn
// man nicht mehr leben will"): a conditional word, then a generic subject
// ("they", "people", "someone", "la gente", "on", "man") as the nearest
// subject before the match, and nowhere a word of the speaker, the
// listener or someone the speaker knows. That is talk about a case, not
// about a person: a frame that a third-party subject lowers (fOther) does
// not fire. "if my son didn't want to live anymore", "if they found out i
// don't want to live", "what if you didn't want to live" keep their level.
func genericHypothetical(toks []string, sets []cset, first int) bool {
	k := first - 1
	for ; k >= 0 && k >= first-6; k-- {
		t := toks[k]
		if firstPersonSubject[t] || t == clauseMark || listenerWords[t] {
			return false
		}
		if genericSubject[t] && (k > 0 && conditionalWords[toks[k-1]] ||
			k > 1 && conditionalWords[toks[k-2]] && (toks[k-1] == "la" || toks[k-1] == "les" || toks[k-1] == "die")) {
			break
		}
	}
	if k < 0 || k < first-6 {
		return false
	}
	for i, t := range toks {
		if listenerWords[t] {
			return false
		}
		// German "man" is "one" here, not a partner ("Mann")
		if sets[i].any(knownPersonSet) && !(genericSubject[t] && sets[i].without(partnerAdultSet).empty()) {
			return false
		}
	}
	return true
}

// Words as the frames see them (normalised and squashed: "wenn" is "wen").
var (
	conditionalWords = map[string]bool{"if": true, "whether": true, "suppose": true, "si": true, "wen": true,
		"wenn": true, "fals": true, "falls": true, "ob": true, "se": true}
	genericSubject = map[string]bool{"they": true, "people": true, "someone": true, "somebody": true,
		"anyone": true, "anybody": true, "folks": true, "gente": true, "alguien": true, "personas": true,
		"ils": true, "on": true, "gens": true, "quelquun": true, "man": true, "leute": true, "jemand": true,
		"menschen": true}
	listenerWords = map[string]bool{"you": true, "u": true, "your": true, "tu": true, "te": true,
		"ti": true, "usted": true, "vous": true, "votre": true, "toi": true, "du": true, "dich": true,
		"dir": true, "dein": true, "deine": true}
	knownPersonSet  = mustSet("self|my|me|friend|family|partner|child")
	partnerAdultSet = mustSet("partner|adult|other")
)

// longTurnWords: in a turn longer than this an everyday word (cooking,
// work, sport, an errand) vetoes a frame only within localVetoReach words
// of the match: "went shopping, bread, milk, and a rope to end it, then
// watched tv" is not made ordinary by the shopping list around it.
const (
	longTurnWords  = 14
	localVetoReach = 6
)

// localVetoSet: the veto concepts that read locally in a long turn; the
// others (fiction, news, code, questions, jokes …) frame the whole turn.
var localVetoSet = func() cset {
	c, err := conceptSet("cook|sport|work|mundane|routine|benign|temporary")
	if err != nil {
		panic(err)
	}
	c.or(routeSet)
	return c
}()

// vetoNear: a concept of c within localVetoReach words of the match.
func vetoNear(sets []cset, c cset, pos []int) bool {
	lo, hi := pos[0], pos[0]
	for _, p := range pos {
		lo, hi = min(lo, p), max(hi, p)
	}
	for k := max(lo-localVetoReach, 0); k <= min(hi+localVetoReach, len(sets)-1); k++ {
		if sets[k].any(c) {
			return true
		}
	}
	return false
}

// triedBefore: "tried", "attempted" (any language) up to four words before
// the match, and no cue that the attempt was just now ("i tried to hang
// myself at sixteen", not "yesterday i tried to hang myself").
func triedBefore(toks []string, lo int) bool {
	for k := lo - 1; k >= 0 && k >= lo-4; k-- {
		if triedWords[toks[k]] {
			return !recentCue(toks)
		}
	}
	return false
}

var triedWords = map[string]bool{
	"tried": true, "attempted": true, "intente": true, "intento": true, "essaye": true, "tente": true, "versucht": true,
}

// negatedFrame: a negation inside the match, or up to five words before it
// in the same clause ("i'm not going to kill myself": the concept sits on
// the phrase's last word). Pseudo-negations ("not going to lie") do not
// count.
func negatedFrame(toks []string, sets []cset, lo, hi int) bool {
	for k := lo; k <= hi; k++ {
		if sets[k].has(negID) && negators[toks[k]] && !isPseudoNeg(toks, k) {
			return true
		}
	}
	for k := lo - 1; k >= 0 && k >= lo-5; k-- {
		t := toks[k]
		if t != "i" && clauseBoundary[t] {
			return false
		}
		if negators[t] && !isPseudoNeg(toks, k) && negatesHere(toks, k, lo) {
			return true
		}
	}
	return false
}

// match looks for distinct words, one per slot, within def.span words; pos
// receives their indices.
func (f *frame) match(toks []string, sets []cset, all cset, pos []int) bool {
	for _, s := range f.slots {
		if !all.any(s.c) {
			return false
		}
	}
	// Try every word that fills the first slot as an anchor; the other
	// slots take the nearest distinct word within the span.
	for a := range sets {
		if !f.slots[0].fills(toks, sets, a) {
			continue
		}
		if f.fillFrom(toks, sets, pos, 0, a, a, a) {
			return true
		}
	}
	return false
}

// fillFrom fills slots k+1… given slot k at index at, with every chosen
// index inside [lo, hi] and hi-lo ≤ span.
func (f *frame) fillFrom(toks []string, sets []cset, pos []int, k, at, lo, hi int) bool {
	pos[k] = at
	if k+1 == len(f.slots) {
		return true
	}
	span := f.def.span
	for j := max(hi-span, 0); j <= min(lo+span, len(sets)-1); j++ {
		if used(pos[:k+1], j) || !f.slots[k+1].fills(toks, sets, j) {
			continue
		}
		if f.fillFrom(toks, sets, pos, k+1, j, min(lo, j), max(hi, j)) {
			return true
		}
	}
	return false
}

func used(pos []int, j int) bool {
	for _, p := range pos {
		if p == j {
			return true
		}
	}
	return false
}

func (s *frameSlot) fills(toks []string, sets []cset, i int) bool {
	if !sets[i].any(s.c) {
		return false
	}
	if s.nextNot != nil && i+1 < len(toks) && s.nextNot[toks[i+1]] {
		return false
	}
	return true
}

// subjectAfter: someone else kills the speaker — a Spanish killing verb
// at or just after i followed by its subject ("me mató un francotirador",
// "me mataron los zombis"), or a French "me tuer" after a verb of the
// second or third person ("mon cardiologue va me tuer", "tu vas me tuer";
// the speaker's own is "je vais me tuer").
func subjectAfter(toks []string, i int) bool {
	for k := max(0, i-2); k < len(toks)-2 && k <= i; k++ {
		switch toks[k] {
		case "va", "vas", "vont", "veut", "veulent":
			if toks[k+1] == "me" && toks[k+2] == "tuer" {
				return true
			}
		}
	}
	for k := i; k < len(toks)-1 && k <= i+1; k++ {
		switch toks[k] {
		case "mato", "mata", "mataron", "matan", "matado":
			switch toks[k+1] {
			case "un", "una", "el", "la", "los", "las", "ese", "esa", "esos", "mi", "mis", "tu":
				return true
			}
		}
	}
	return false
}

// deathTold: the death word at i happened or is avoided — a past form, or
// "without" just before it (fAsksHow).
func deathTold(toks []string, i int) bool {
	if i < 0 || i >= len(toks) {
		return false
	}
	switch toks[i] {
	case "died", "killed", "gestorben", "starben", "starb", "umgekommen", "getotet", "murieron", "murio",
		"fallecieron", "fallecio", "morts", "mortes", "decedes", "tues", "tuees":
		return true
	}
	for k := max(0, i-2); k < i; k++ {
		switch toks[k] {
		case "without", "sin", "sans", "ohne":
			return true
		}
	}
	// "how did so many people die building the canal": a death told in the
	// past with its auxiliary
	for k := max(0, i-5); k < i; k++ {
		if toks[k] == "did" && (k == 0 || toks[k-1] != "i") {
			return true
		}
	}
	return false
}
