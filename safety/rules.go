package safety

// ruleFlag changes how a rule's match is interpreted.
type ruleFlag uint8

const (
	// fImmune: the phrase is itself negative ("do not want to live", "no
	// reason to live"); surrounding negation, past tense or a third-party
	// subject never lower it.
	fImmune ruleFlag = 1 << iota
	// fNoPast: an event in progress ("took a bunch of pills"); a past-time
	// word does not lower it.
	fNoPast
	// fMeans: mentions means or a place (pills saved, a rope, a bridge);
	// with a time or act cue, here or in recent turns, it becomes crisis.
	fMeans
	// fTime: a near-time cue ("tonight", "right now").
	fTime
	// fAct: an act cue ("going to do it", "goodbye").
	fAct
	// fPlace: being at a place of danger ("at the bridge"); with a time cue
	// in the same utterance it is crisis.
	fPlace
)

// ruleDef is one rule of the phrase table. Crisis rules (T1) are explicit
// intent, plan, means or timeline; elevated rules (T2/T3) are passive
// ideation, hopelessness, distress, past self-harm and third-party concern.
// Level none rules only carry cues for the conversation-level checks.
// Patterns are written in normalised form (see normalize.go).
type ruleDef struct {
	id    string
	level Level
	lang  string
	flags ruleFlag
	pats  []string
}

// macros are shared alternations, used in patterns as @name.
var macros = map[string]string{
	// verbs that, with "myself", name killing oneself
	"selfkill": "kill|killing|off|offing|hang|hanging|shoot|shooting|drown|drowning|stab|stabbing|poison|poisoning|" +
		"suffocate|suffocating|unalive|unaliving|strangle|strangling|gas|gassing|electrocute|end|ending|murder",
	// first-person intent or plan, before an act
	"intent": "want|wanting|going|plan|planning|planned|decided|deciding|ready|about|trying|intend|intending|need|" +
		"urge|tempted|considering|contemplating|thinking|think|thought|feel|feeling|will|should|got",
	// intent words that put the speaker's own death next ("i am going to die")
	"wantdie": "want|wanting|going|plan|planning|decided|ready|need|wish|hope|deserve|about|trying|longing",
	// wanting death itself
	"desire":  "want|wanting|wish|wishing|hope|hoping|ready|deserve|longing|prefer",
	"place":   "bridge|building|roof|rooftop|cliff|balcony|ledge|tower|window|overpass|skyscraper|motorway|highway|parking|edge",
	"vehicle": "train|bus|car|truck|traffic|lorry|subway|tram",
	"meds": "pills|pill|tablets|meds|medication|medications|painkillers|sleeping|paracetamol|tylenol|insulin|" +
		"antidepressants|opioids|oxy|xanax",
	// words after "die" that make it the colour verb or an idiom
	"notdeath": "my|her|his|the|hair|your|their|for|of|laughing|tired|serious|on|from|down|inside|happy|than",
	// ASR renderings of "myself"
	"myselfasr": "myself|shelf|cell|sell",
}

var ruleDefs = []ruleDef{
	// ---- English, crisis ----
	{"en.crisis.kill_self", LevelCrisis, "en", 0, []string{
		"kill myself !laughing|working|over|doing|studying|trying|for",
		"killing myself !laughing|working|over|at|doing|studying|trying|with|for|to",
		"kms", "unalive myself|me", "unalive", "sewerslide", "overdosed !on",
		"want|going to killed myself",
		"if i killed|kill myself",
		"suicide myself", "kill me self", "off myself", "offing myself",
		"@selfkill myself !laughing|working|over|doing|studying|trying|for|at|with|to|in|on|up|out",
		"@intent [to] @selfkill myself", "kill|killing my shelf|cell|sell", "@selfkill meself",
		"use it|this|them|that on myself", "use ~2 on myself", "nobody will ~2 see me again", "bleed|bleeding out", "not be alive", "not to be alive",
	}},
	{"en.crisis.end_life", LevelCrisis, "en", 0, []string{
		"end|ending|take|taking my [own] life", "end|ending it all", "end|ending everything",
		"want|going|need|about|plan|planning|ready|decided|time to end it", "thinking about|of ending it",
		"end it tonight|now|today", "how to end my life", "how do|can|should i end my life",
		"finish myself off", "end myself", "end|ending my suffering|existence",
		"@intent [to] end|ending my [own] life|suffering|existence", "leave|leaving this world|earth|life",
		"@intent [to] end|ending things !with|between|at", "end|ending things for good", "end it for good",
		"@intent [to] end|ending it !with|between|at|here|there|now|early|today",
		"stop|stopping existing", "stop|stopping being alive|here", "cease to exist", "not exist anymore", "want to not exist",
		"my last day|night|week alive", "my note is written|done|ready|finished", "note is written",
		"knife|blade|razor|gun|scissors ~3 to|against my wrist|wrists|throat|head|neck|temple", "my last day|night on earth", "last day|night of my life", "check out for good",
		"@intent to and my life", "want it all to end", "want|wish|need my life to ~2 end|over|stop", "feel dying !my|the|her|his|it|hair|your", "should not be alive|here",
		"do not want to be on this earth|planet",
	}},
	{"en.crisis.want_die", LevelCrisis, "en", 0, []string{
		"want [to] die !@notdeath", "want to be dead", "wish i was|were dead", "better off dead", "rather be dead",
		"ready to die", "deserve to die", "should [have] die|died", "should be dead", "would to die", "hope i die",
		"let me die", "want it [all] to be over", "over for good", "want to disappear forever|permanently",
		"wish i could die", "better off if i was|were dead|gone", "better off if i died|die", "happier|better ~3 if i was|were dead",
		"want|wish|hope|ready|going|wanting ~4 sleep forever", "@desire [to] [be] die|dead !@notdeath", "rather die|dead !than",
		"death is the|my only|best|answer|way|escape|solution|choice|option", "only way out ~4 death|die|dying|suicid*|kill",
		"suicid* is the|my only|best|answer|way|escape|solution|choice|option", "suicid* ~2 the|my only|best way|option|answer|choice", "only option ~3 suicid*|die|death|dead",
		"sleep ~2 not wake up", "not be a burden much|anymore|for", "time ~3 to die", "be gone forever",
		"gun ~2 in my lap|mouth", "drive|driving|swerve|swerving ~2 into ~3 oncoming|traffic|wall|tree|truck|lorry", "will not see me again",
		"i ~2 @wantdie [to] ~2 die|dead !@notdeath", "i ~2 @desire ~3 die|dead|death !@notdeath",
		"am|are ending things|it|everything !with|between|at|here|there|now|early|today",
		"lie|lay|lying|sit|sitting|stand|standing ~2 on ~2 tracks|railway|rails|railroad",
		"let me die", "let me go $", "i am a goner", "will be free of me", "will not have to deal with me",
		"will not be a problem anymore|much", "last time ~3 hear|see|talk from|me|to", "going to join my|him|her",
		"imagine|imagining|picture|picturing myself ~2 dead|dying|hanging|jumping|gone",
		"bullet ~3 my head|brain|mouth", "drink|drinking|swallow|swallowing|take ~2 bleach|antifreeze|poison|rat",
		"run|running|walk|walking|step|stepping into|in ~2 traffic", "bath|bathtub|tub ~4 razor|blade|knife|razors|blades",
		"razor|blade|knife ~4 bath|bathtub|tub", "know what i am going to do with it",
		"letter|letters|note|notes ~4 goodbye", "tonight is the night ~4 do it", "the night i ~2 do it",
		"sleep|asleep ~2 not wake up", "disappear ~3 never come back", "done with ~2 life !insurance", "checking out $", "gun to my head", "blow my brains out", "garage ~4 engine running",
		"engine running ~4 garage", "carbon monoxide", "hose ~4 exhaust", "exhaust ~4 hose|pipe", "drink|drinking|starve|starving myself to death", "my affairs in order", "put my affairs",
	}},
	{"en.crisis.no_will_to_live", LevelCrisis, "en", fImmune, []string{
		"do not want to live !in|with|at|near|there|on|by|alone|together", "do not want to live in this world|life",
		"not going to be alive|around|here much|anymore|long", "not going to wake up", "will not wake up tomorrow|again", "rather die|dead than ~3 live|living|exist|continue|alive",
		"do not want to be alive", "rather not be alive", "do not want to exist",
		"do not want to be here $", "do not want to be here anymore|any|no", "do not want to wake up", "hope i do not wake up",
		"wish i ~2 not wake up", "never wake up", "no reason [for] [me] to live|living", "nothing [left] to live for",
		"not worth living", "no reason ~4 alive|live|living", "nothing ~3 live for", "can not go on living", "do not want to go on", "tired of living|life",
		"tired of being alive", "done with life|living", "am done living", "had enough of living|life",
		"will not be here|around much|anymore", "will not be alive", "will not be around by",
		"will never see me again", "will not hear from me again", "not going to be here much|anymore",
		"do not deserve to live", "no point [in] living", "why should i live", "why am i alive",
		"do not want to be here tomorrow",
	}},
	{"en.crisis.self_harm_intent", LevelCrisis, "en", 0, []string{
		"want|going|need|about|plan|planning|ready|decided|urge to hurt|cut|harm|burn|stab myself",
		"hurting|cutting|harming|burning myself ~ now", "am hurting|cutting|harming myself $",
		"@intent [to] hurt|cut|harm|burn|stab myself", "@intent [to] cut|cutting ~3 deep|deeper|deeply", "might|may|could hurt|harm|cut|kill myself",
		"do not feel safe ~3 myself|now|tonight", "am not safe ~3 myself|now|tonight|around",
		"slit|slitting|cut|cutting my wrists|wrist|throat",
	}},
	{"en.crisis.means", LevelCrisis, "en", fNoPast, []string{
		"took|swallowed|taken|take|swallow|taking a bunch of pills|tablets|meds|medication|painkillers",
		"took|swallowed|taken|take|swallow|taking to many pills|tablets|meds|painkillers",
		"took|swallowed|taken|take|swallow|taking all [of] my|the|these|those pills|tablets|meds|medication|painkillers",
		"took|swallowed|taken|take|swallow|taking a [whole] bottle|handful|box|pack|packet of [my|the] pills|tablets|meds|sleeping|painkillers",
		"took|swallowed|taken|take|swallow|taking an overdose", "overdosing !on", "overdosed|overdosing|od on ~2 @meds",
		"take them all", "take|taking|swallow|swallowing all [of] them", "rope ~2 tied|ready|up", "tied ~2 rope|noose",
		"esta noche me mato", "me mato !trabajando|estudiando|de|a|con|en|por|para|cuando|si", "saltar ~3 puente|edificio|azotea|balcon|ventana", "took|swallowed|taken|taking|swallowing|take|swallow ~2 lot|lots|loads|ton|tons|handful|heaps|dozens|dozen|twenty|thirty|fifty|hundred|many|extra|double ~2 @meds", "lethal ~2 dose|amount|overdose", "@meds ~4 lethal|die|dead|overdose|kill",
		"how much|many ~4 to die|overdose|kill", "@intent [to] take|swallow ~2 all|every|whole|entire",
		"all ~2 @meds ~3 going|about|want|will|take|swallow", "how ~3 kill yourself|oneself", "tie a noose",
		"easiest|painless|quickest|fastest|best|quietest|surest ~2 way|ways|method|methods ~3 die|suicid*",
		"easiest|painless|quickest|fastest|best|quietest|surest ~2 way|ways|method|methods ~3 kill yourself|myself|oneself",
		"how long ~4 to die", "ways|way|methods|method to die", "looking|look|looked|researching|research|googling|googled|searching|searched ~3 ways|way|how to die|overdose|kill",
		"looking|look|looked|researching|research|googling|googled|searching|searched ~3 suicid*|overdose",
		"death ~2 better|easier|relief|welcome", "better|happier|easier dead", "walk|walking into ~2 sea|ocean|lake|river", "want|wish|hope|need someone|somebody ~3 kill me", "how many pills ~4 die|kill|dead|lethal|overdose|many",
		"easiest|painless|quickest|fastest|best|quietest way to die|kill", "most painless way",
		"how do|can|should i kill myself", "how to kill myself", "how to die", "way to kill myself",
		"want|going|plan|planning|about|ready|decided|need to overdose|od",
		"gun ~2 ready|loaded", "rope ~2 ready",
		"jump|jumping|step|stepping|leap|leaping|fall off|from|out ~5 @place",
		"throw|throwing myself off|from|out ~2 @place",
		"jump|jumping|step|stepping|walk|walking|lie|lay|lying in front of ~2 @vehicle",
		"throw|throwing myself in front of ~2 @vehicle", "under a|the train",
		"drive|driving|crash|crashing|steer|steering my car off", "drive|driving|crash|crashing|steer|steering my car into ~2 tree|wall|river|lake|sea|canal|water|traffic|truck|lorry|bridge|pillar|barrier|oncoming", "edge of ~2 bridge|roof|rooftop|cliff|balcony|building|ledge|platform|tower",
		"@intent ~2 overdose|od", "way out ~3 death|dying|suicid*", "stop|stopping living", "overdose on ~2 @meds", "take|taking|swallow|swallowing|took|swallowed all ~3 @meds",
		"want|going|about|ready to jump $", "crash my car on purpose", "drive|driving off ~2 bridge|cliff|road",
		"standing|sitting on ~2 edge|ledge|railing", "standing|sitting on ~2 roof|bridge",
		"pills in front of me", "rope around my neck", "noose",
	}},
	{"en.crisis.plan", LevelCrisis, "en", 0, []string{
		"wrote|written|writing|left [my|a|the] suicide|goodbye|farewell note|notes|letter|letters",
		"wrote|written|writing my note|notes", "wrote the note for my",
		"this is my goodbye", "this is goodbye !for", "goodbye forever", "saying|say goodbye to everyone|everybody",
		"gave|giving away ~2 things|stuff|belongings|possessions", "wrote|written|writing goodbye|goodbyes ~2 everyone|everybody|all", "tonight is the night $",
		"know how i am going to do it", "know how i will do it", "have a plan to die|end|kill",
		"commit|committing|commiting suicide", "suicidal thoughts|ideation|feelings|urges",
		"am|feel|feeling|been|getting|getting suicidal", "think|thinking|thought|thoughts|considering about|of suicid*",
		"plan|planning|planned ~2 suicid*", "plan|planning|planned my death|funeral|exit", "going to commit", "my suicide", "suicide plan",
		"want|going|plan|planning|decided|ready|considering|contemplating|tempted|urge ~2 suicid*",
		"thinking|think|thought ~2 killing myself",
	}},
	// ---- English, elevated ----
	{"en.elevated.self_harm", LevelElevated, "en", 0, []string{
		"hurt myself !playing|running|at|on|lifting|skiing|while|during|in|exercising|working|skating|climbing|cycling|falling",
		"cut myself !shaving|cooking|on|while|by|accidentally|chopping|opening|peeling|slicing|some|slack|off|short",
		"cutting myself !shaving|cooking|on|while|chopping", "harm myself", "harming myself", "burn myself", "burning myself",
		"self harm*", "scars from cutting|self", "used to hurt|cut|harm|burn myself",
		"cutting again", "been cutting", "started cutting", "cut again", "cutting|harming|hurting myself again", "relapsed", "starve myself", "starving myself",
		"make|making myself throw|sick|vomit|puke", "have not eaten in days|a", "am not eating", "punish myself",
	}},
	{"en.elevated.hopeless", LevelElevated, "en", 0, []string{
		"hopeless", "hopelessness", "no hope", "lost [all] hope", "no point anymore", "no point $", "no point in|to anything|trying|going|living|life",
		"what is the point $", "what is the point anymore", "what is the point of|in anything|living|life|trying|it",
		"do not see the point", "never going to get better", "never get better", "will not get better", "not going to get better",
		"nothing ~2 ever get|gets better", "can not see a way out", "see ~2 way out", "no way out $", "no way out", "no future",
		"give up on everything|life|myself", "feel giving up", "want to give up $", "giving up on life|everything",
		"nothing to look forward to", "everything|life|living|existence ~2 pointless|meaningless|hopeless", "nothing matters anymore", "nothing matters", "meaningless",
		"life ~3 pointless|unbearable", "no reason to keep going|trying|fighting", "wish i was|were not here|alive|around",
		"if i was|were gone|dead", "if i disappeared", "better without me", "said|saying my goodbyes", "said|saying goodbye to ~2 family|kids|children|parents|friends|everyone", "do not see a future",
		"feel|feeling ~2 alone|lonely|empty|hopeless|worthless|trapped|numb", "have nothing left", "give up $", "want it to end|stop", "want the pain|hurting|hurt|suffering to end|stop",
		"hate being alive", "until i bleed", "want to feel pain",
	}},
	{"en.elevated.cant_cope", LevelElevated, "en", 0, []string{
		"can not go on !living", "can not do this anymore", "can not do this $", "can not take it|this anymore", "can not take anymore",
		"can not take this $", "can not take it $", "can not cope", "not coping", "can not handle it|this|anything|life anymore",
		"can not live this", "end of my rope|tether", "falling apart", "breaking down", "am struggling !with|to", "struggling to keep going", "struggling to cope|live|survive",
		"struggling much|badly", "struggling to cope", "struggling with everything|life", "am not okay|ok|alright",
		"how much longer i can", "exhausted of everything", "tired of everything", "tired of it all", "have had enough $",
		"scared of what i might|will|could do", "do not trust myself", "dark thoughts", "dark place",
		"want the pain to stop", "pain to stop", "do|doing something|anything stupid", "emotional pain",
		"pain emotionally", "am in much pain", "want to disappear $", "wish i could disappear", "wish i could vanish",
		"want everything to stop", "will not be here|around tomorrow", "can not keep going|doing|living", "not come back $", "keep crying", "hard time coping|cope", "alone in this world",
		"things ~2 never change", "nothing ~2 ever change|changes", "never going to change", "feel|feeling low", "such a failure", "complete failure",
		"struggling a lot", "when i am dead|gone", "nobody will find me", "if i was|were not around|here",
		"tell|telling my ~3 i am sorry", "tell|telling my ~3 i love them|her|him",
		"can not carry on", "can not face ~2 anything|another|tomorrow|life", "can not get out of bed",
		"exhausted with|of everything", "tired of fighting|trying", "feel dead inside", "dead inside", "feel numb",
		"done with everything", "do not want to do this anymore",
	}},
	{"en.elevated.worth", LevelElevated, "en", 0, []string{
		"worthless", "am|feel useless", "burden", "better off without me",
		"nobody ~2 care|cares|miss|notice|notices", "nobody ~2 love|loves|likes|wants|needs|understands me",
		"would not notice if i", "would not miss me",
		"hate myself", "hate my life", "hate who i am", "disgusted with myself", "am|feel empty", "empty inside", "feel|feeling alone", "all alone", "lonely",
		"feel|feeling|am trapped", "am drowning", "depressed", "depression", "panic attack", "can not stop crying",
		"crying all the time|every", "am|feel broken", "wish i had never been born", "never been born",
		"should never have been born", "think|thinking|thought about dying|death", "think|thinking|thought about not being|existing", "think|thinking|thought about my death",
		"do not care if i die|live|wake", "would not mind dying", "would not mind if i died", "am|feel a failure", "am a mistake",
		"nobody likes me", "everyone hates me",
	}},
	{"en.elevated.third_party", LevelElevated, "en", 0, []string{
		"kill|kills|killed|killing|hurt|hurts|hurting|cut|cuts|cutting|harm|harming|hang|hanged|shot|shoot himself|herself|themselves|themself|hisself",
		"wants|wanted|trying|planning|tries|tried to die !@notdeath", "wanted to die !@notdeath",
		"talking|talks|talked|thinking about suicid*|killing|dying|ending", "is|was suicidal",
		"does not want to live|die !in|with", "end|ending|take|taking his|her|their [own] life", "committed suicide", "died by suicide", "took his|her|their [own] life", "ended his|her|their [own] life",
		"lost someone to suicide",
	}},
	{"en.elevated.mention", LevelElevated, "en", 0, []string{
		"i am dying !@notdeath|to|here|laughing", "my death", "my funeral",
		"attempted suicid*", "suicide attempt", "suicid* !prevention|awareness|squad|rate|rates|statistics|research|month|week", "overdose",
	}},
	// ---- Spanish ----
	{"es.crisis.want_die", LevelCrisis, "es", 0, []string{
		"quiero|quisiera|deseo morir|morirme|matarme|suicidarme", "me quiero morir|matar|suicidar",
		"voy a matarme|suicidarme", "me voy a matar|suicidar", "quitarme la vida", "acabar|terminar con mi vida",
		"acabar con todo", "suicidarme", "pensando|pienso|pensado|pensar ~ en ~ suicid*|matarme",
		"ojala estuviera|estuviese muerto|muerta", "quiero|quisiera|prefiero|preferiria estar muerto|muerta", "mejor muerto|muerta",
		"tomarme|tomar todas las|mis pastillas", "hacerme dano", "me quiero hacer dano", "cortarme las venas",
		"quiero dormir y no despertar", "tomarme|tomar|tomo|tome|trague|tragarme ~2 todo|todas|toda ~3 pastillas|pildoras|medicinas|medicamentos|frasco|caja", "ideas suicidas", "quiero acabar con todo", "me ~3 quitar la vida", "ganas de morir|morirme|matarme|suicidarme|desaparecer", "terminar con todo", "dejar de existir",
		"ojala me muriera|muera|muriese", "tirar|tirarme|aventarme|lanzarme ~4 puente|edificio|tren|ventana|balcon|azotea|vias",
		"ahorcar|ahorcarme", "me voy a colgar", "quiero colgarme", "colgarme", "mejor me mato", "cortar* las venas", "quiero cortarme", "me quiero cortar",
		"cansado|cansada de vivir", "me quiero ~2 tirar ~3 puente|edificio|tren",
	}},
	{"es.crisis.no_will_to_live", LevelCrisis, "es", fImmune, []string{
		"no quiero vivir !en|con|alli|aqui|cerca", "no quiero seguir viviendo", "no quiero estar aqui",
		"no quiero despertar", "no vale la pena vivir", "no tengo razon|razones|motivos para vivir", "nada por lo que vivir",
		"ya no quiero vivir", "no quiero vivir mas", "no quiero ~2 con vida", "no quiero estar vivo|viva",
	}},
	{"es.elevated", LevelElevated, "es", 0, []string{
		"sin esperanza", "no puedo mas", "no aguanto mas", "siento ~ solo|sola|vacio|vacia|inutil", "inutil",
		"nadie me quiere", "soy una carga", "deprimido|deprimida|depresion", "me corto", "cortarme", "autolesion*",
		"estoy harto|harta de vivir|todo", "se quiere morir|matar|suicidar", "quiere morirse|matarse|suicidarse", "no vale nada", "odio mi vida", "me odio", "suicidio|suicidarse|suicida", "quiero desaparecer",
		"importo a nadie", "no tengo esperanza|esperanzas", "no tengo ganas de vivir", "sentido a nada|la", "no ~2 veo ~2 sentido", "no veo salida", "me corte|cortaba", "me he cortado", "nadie ~3 extranaria|echaria|importa|quiere|necesita", "no tiene sentido", "cansado|cansada de todo",
		"me siento ~2 fatal|mal ~2 todo", "desesperado|desesperada", "no veo ~2 salida", "no tengo ganas de nada",
		"me hago dano", "sobredosis", "no existir|existiera", "no haber nacido", "nadie ~3 extran*",
	}},
	// ---- French ----
	{"fr.crisis.want_die", LevelCrisis, "fr", 0, []string{
		"veux|voudrais|vais|envie|pense|penser|songe ~2 mourir !de", "veux|voudrais|vais|envie|pense|penser|songe ~3 me tuer|suicider",
		"veux|voudrais|vais|envie ~2 en finir", "me suicider", "mettre|mets|mettrai fin ~ mes|ma jours|vie", "mettre|mets|mettrai fin ~2 tout",
		"suicidaire|suicidaires", "pense|pensees|penser ~ au|a ~ suicide", "veux|voudrais|prefererais|aimerais ~2 etre mort|morte",
		"veux|vais|envie ~2 me faire du mal", "avaler ~2 tous|toutes mes medicaments|cachets|pilules",
		"me jeter ~3 pont|fenetre|train|sous", "me pendre", "me foutre en le air", "veux|vais|envie ~2 crever",
		"marre de vivre", "me ~2 ouvrir les veines", "sauter ~3 pont|fenetre|toit|immeuble",
		"pris ~2 tous|toutes mes medicaments|cachets", "peux plus de vivre", "vais sauter $", "prendre|avaler|pris|avale ~2 tous|toutes ~2 medicaments|cachets|pilules|comprimes",
		"dormir pour toujours", "vie ne vaut pas la peine",
	}},
	{"fr.crisis.no_will_to_live", LevelCrisis, "fr", fImmune, []string{
		"ne veux plus vivre", "veux plus vivre", "ne ai plus envie de vivre", "plus etre en vie", "veux plus etre vivant|vivante", "plus envie de vivre", "ne veux pas vivre !a|en|avec|dans",
		"aucune raison de vivre", "ne vaut pas la peine de vivre", "ne veux plus me reveiller", "ne plus me reveiller",
	}},
	{"fr.elevated", LevelElevated, "fr", 0, []string{
		"ne en peux plus", "en peux plus", "sans espoir", "desespere|desesperee", "me sens ~2 seul|seule|vide|inutile|nul|nulle",
		"deprime|deprimee|depression", "fardeau", "plus envie de rien", "me scarifie", "scarification", "automutil*",
		"me faire du mal", "tentative de suicide", "je me deteste", "je me hais", "marre de tout", "envie de disparaitre",
		"suis a bout", "bout du rouleau", "suis un poids", "un poids pour", "plus de issue", "aucune issue", "pas de issue", "sans issue", "suis ~2 seul|seule", "plus de espoir", "me fais du mal", "je me coupe", "a quoi bon", "vie ne vaut rien", "mieux sans moi", "personne ~3 aime|manquer*|remarquer*|comprend", "veux disparaitre", "plus la force",
	}},
	// ---- German ----
	{"de.crisis.want_die", LevelCrisis, "de", 0, []string{
		"will|mochte|werde|wurde|moechte ~2 sterben", "will|mochte|ware|wurde ~2 tot", "mich ~2 umbringen", "bringe mich ~2 um",
		"mir ~2 das leben ~ nehmen", "nehme mir ~2 das leben", "denke ~2 an suizid*|selbstmord*", "suizidgedanken",
		"selbstmordgedanken", "bin suizidal", "allem ein ende", "meinem leben ein ende", "will|werde|mochte mich ~2 verletzen",
		"alle ~2 tabletten", "brucke|dach|hochhaus ~2 springen", "vor den zug", "mich ~2 toten", "selbstmord begehen",
		"suizid begehen", "lebensmude", "mich ~2 umzubringen", "vor ~2 umzubringen", "springe ~3 brucke|dach|hochhaus|fenster", "nie wieder aufwachen", "besser ~3 tot", "mich ~2 erhangen|erschiessen|vergiften|toten", "nicht mehr existieren",
	}},
	{"de.crisis.no_will_to_live", LevelCrisis, "de", fImmune, []string{
		"nicht mehr leben", "nicht mehr aufwachen", "nicht mehr da sein", "keinen grund mehr zu leben", "nicht mehr hier sein",
		"mag nicht mehr leben", "nicht mehr weiterleben", "nicht weiterleben", "keine lust mehr zu leben", "will nicht mehr am leben sein",
	}},
	{"de.elevated", LevelElevated, "de", 0, []string{
		"hoffnungslos", "kann nicht mehr $", "keine hoffnung", "fuhle mich ~2 allein|einsam|leer|wertlos|nutzlos",
		"einsam", "wertlos", "depressiv", "depression", "deprimiert", "bin ~2 last", "eine last", "sinnlos",
		"geritzt", "ritze mich", "ritzen", "halte es nicht mehr aus", "keinen sinn mehr", "mich selbst verletzen",
		"verletze mich", "suizid*", "selbstmord*", "hasse mich", "will nicht mehr $",
		"niemand ~3 vermissen|vermisst|liebt|braucht", "bin am ende", "bin allein $", "bin ~2 einsam", "alles ~2 zu viel", "kann einfach nicht mehr", "kann nicht mehr !schlafen|essen|warten|laufen|gehen|sehen|horen|arbeiten|lange|denken|atmen|lesen|fahren", "kann ~2 nicht mehr $", "selbst verletzt", "mich verletzt", "verzweifelt", "schneide mich", "besser ~2 ohne mich", "keinen ausweg", "halte ~2 nicht mehr aus", "verschwinden",
	}},
	// ---- cues (no level of their own) ----
	{"cue.means_stockpile", LevelElevated, "en", fMeans, []string{
		"@meds saved", "@meds ~2 lined|counted|laid|sorted", "holding ~3 @meds|gun|knife|rope|blade|razor|noose", "saving [up] [my] @meds", "saved [up] [my] @meds", "stockpil*", "hoarding [my] @meds",
		"pastillas guardadas", "tabletten gesammelt",
	}},
	{"cue.means", LevelNone, "", fMeans, []string{
		"bought|got|have ~2 rope",
		"bought|got|have ~2 gun|knife|blade|razor|blades|razors", "have a plan $", "pills ready",
	}},
	{"cue.place", LevelNone, "", fMeans | fPlace, []string{
		"at|to|on the tracks|railway|railroad|rails", "train tracks", "by|near the cliff|bridge|edge|ledge",
		"at the bridge|ledge|roof|cliff|tracks", "on the bridge|ledge|roof|tracks", "am at|on ~3 bridge|roof|ledge|cliff",
	}},
	{"cue.time", LevelNone, "", fTime, []string{
		"tonight", "today", "tomorrow", "now", "soon", "weekend", "this morning", "this evening", "hoy", "manana",
		"esta noche", "ahora", "ce soir", "maintenant", "demain", "aujourd", "heute", "jetzt", "morgen", "nacht",
	}},
	{"cue.act", LevelNone, "", fAct, []string{
		"do it", "doing it", "goodbye", "bye forever", "it is time", "am ready",
		"nobody can stop me", "lo voy a hacer", "lo hare", "vais le faire", "mache es", "tue es",
		"use it|them|this $", "going to swallow them", "swallow them $", "going to take them $", "going to take them now|tonight|all", "use it|them|this tonight|now|today", "drive|jump off it", "said|saying my goodbyes", "last time", "ready to go", "going now $",
	}},
}
