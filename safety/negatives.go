package safety

import (
	"fmt"
	"strings"
)

// Negative explanations (issue 13, round 4b): the last step of analyze.
// Ordinary speech is full of danger words that mean nothing of the kind —
// a hyperbole with its complement ("me muero de risa", "je suis mort de
// honte", "ich lach mich tot", "dying to know"), a word a domain
// reinterprets (suicides as a sprint drill beside "coach", "cut" beside
// "hair", a pet that got into a medicine bottle, a phone that died, a death
// in a game or at the end of a series), a song title in quotes. An
// explanation names the very words it explains (its cue span); the
// utterance may be lowered to none only when, with every explained span
// masked out, nothing else in it reads as danger: no phrase rule, no frame,
// no model verdict and no strong danger concept (strongSet). Otherwise the
// level stands, whatever the explanation. DetectTurn restores the level when
// an earlier turn was elevated or named means (negHold.restore): context
// never lowers.
//
// Explanations only lower to none; they never touch an ambiguous elevated
// that no explanation covers ("kms lol" stays elevated), never a first-person
// method, intent, preparation or act that sits outside the span ("i rage quit
// the game and now i'm thinking about killing myself" keeps its crisis), and
// a span is chosen so that no self-harm phrase loses a word to it ("cut"
// beside "hair" is vetoed by a wrist, an arm, "myself").

// negDef is one explanation: cue patterns (pattern.go syntax) whose matches
// are the explained spans, domain groups that must all be present (each
// group any of its patterns; "@laugh" is a laugh word or a trailing laugh)
// and vetoes that disable it.
type negDef struct {
	id     string
	cues   []string
	domain [][]string
	veto   []string
}

// Word lists the explanations share, in normalised spelling (accents
// folded, contractions expanded); patterns squash them.
const (
	nwSport = "coach|coaches|practice|practise|training|trainer|gym|court|pitch|team|drill|drills|" +
		"sprint*|laps|basketball|football|soccer|volleyball|hockey|rugby|tennis|workout*|squat*|deadlift*|" +
		"spinning|crossfit|wod|burpee*|lunge*|cardio|marathon|halfmarathon|instructor|pilates|yoga|hiit|" +
		"bootcamp|jogging|cycling|rowing|reps|legday|quads|hamstrings|glutes|" +
		"entrenador|entrenadora|entreno|entrenamiento|gimnasio|gimnas|cancha|padel|futbol|baloncesto|agujetas|" +
		"mister|sentadilla*|pesas|entraineur|entrainement|muscu|musculation|courbature*|footing|" +
		"beintag|fitness*|mannschaft|muskelkater|halbmarathon|sprints|turnhalle|trainerin|kniebeuge*|" +
		"rink|skating|tryouts|tryout|beep|stairmaster|treadmill|boxing|kickboxing|10k|5k|semifinal|semifinals|" +
		"playoffs|scrimmage|conditioning|preseason|spin|peloton|zumba|climbing|bouldering|triathlon|" +
		"boxeo|natacion|triatlon|maraton|escalada|boxe|natation|escalade|triathlon|seance|" +
		"boxen|schwimmtraining|klettern|fussballspiel|fussballtraining|spinningkurs|fitnessstudio"
	nwGame = "game|games|gaming|jungler|lobby|respawn|ranked|fortnite|minecraft|valorant|csgo|warzone|elden|" +
		"raid|noob|gg|ragequit|headshot|spawn|npc|quest|checkpoint|jeu|jeux|joueur|juego|partida|jugando|" +
		"videojuego|videogame|zocken|gezockt|ps5|xbox|controller|manette|dota|apex|pubg|overwatch|zelda|" +
		"multiplayer|pvp|creeper"
	nwHair = "hair|haircut|hairdresser|barber|salon|bangs|fringe|trim|bob|layers|ends|beard|" +
		"pelo|cabello|flequillo|peluquera|peluquero|peluqueria|barbero|puntas|melena|" +
		"cheveux|coiffeur|coiffeuse|frange|pointes|barbe|" +
		"haare|haar|friseur|friseurin|pony|spitzen|frisur|bart|roots|highlights|balayage|bleach|eyebrows|" +
		"raices|mechas|racines|meches|ansatz|strahnen"
	nwCut = "cut|cuts|cutting|chopped|chop|trimmed|snipped|shaved|corto|corte|cortaron|corta|cortado|cortar|" +
		"cortarme|coupe|couper|coupes|coupee|coupait|geschnitten|abgeschnitten|schneiden|schneidet|schnitt|abschneiden|" +
		"kurz"
	// selfBody: where people cut themselves on purpose; near one, no
	// domain explains a cut.
	nwSelfBody = "wrist*|arm|arms|forearm*|thigh*|skin|vein*|leg|legs|myself|muneca*|brazo*|antebrazo*|muslo*|" +
		"piel|vena*|venas|pierna*|poignet*|bras|avant|cuisse*|peau|veine*|jambe*|handgelenk*|unterarm*|" +
		"oberschenkel*|haut|pulsader*|bein|beine|purpose|proposito|adrede|expres|absichtlich|blood|sangre|sang|blut|" +
		"bleeding|sangra|saigne|blutet|deep|profundo|profond|tief"
	nwPet = "cat|cats|dog|dogs|puppy|kitten|pet|rabbit|hamster|parrot|ferret|" +
		"perro|perra|perrito|perrita|gato|gata|gatito|mascota|conejo|" +
		"chat|chatte|chien|chienne|chiot|chaton|lapin|" +
		"katze|kater|hund|hundin|welpe|kaninchen|hamster"
	nwMed = "pill*|tablet*|medicine*|meds|medication*|ibuprofen|paracetamol|tylenol|advil|aspirin|sleeping|bottle|" +
		"painkiller*|antidepressant*|vitamin*|gummies|pastilla*|medicamento*|comprimido*|frasco|ibuprofeno|" +
		"cachet*|comprime*|medicament*|boite|doliprane|tablette*|medikament*|packung|schlaftablette*|" +
		"tabletten*|ibu"
	nwMedTail = " [of|de|del|du|des|d|von|with|con|avec|mit] [the|la|las|los|el|les|mis|my|her|his|sus|ses|mes|" +
		"meine|meinen|meiner|seine|ihre|an|a|un|una|une|ein|eine|her] [" + nwMed + "]"
	nwThing = "plant|plants|flower|flowers|basil|cactus|tree|battery|phone|laptop|computer|pc|car|charger|" +
		"printer|fridge|tv|router|wifi|headphones|airpods|mouse|keyboard|tablet|ipad|console|engine|bulb|" +
		"planta|plantas|flores|bateria|movil|telefono|celular|portatil|ordenador|coche|carro|cargador|" +
		"plante|plantes|fleurs|batterie|portable|telephone|ordi|ordinateur|voiture|chargeur|" +
		"pflanze|pflanzen|blumen|akku|handy|rechner|computer|auto|ladegerat|drucker|kuhlschrank"
	nwMundane = "meeting|meetings|monday|mondays|work|office|slide|slides|email|emails|zoom|call|calls|shift|" +
		"deadline|exam|exams|homework|class|lecture|traffic|commute|spreadsheet|excel|presentation|" +
		"reunion|lunes|trabajo|oficina|examen|clase|tarea|deberes|atasco|curro|" +
		"lundi|boulot|travail|bureau|cours|devoirs|partiel|bouchons|exam|" +
		"besprechung|montag|arbeit|buro|schule|klausur|prufung|hausaufgaben|stau|vorlesung|mathe|math|maths"
	nwSale = "selling|sale|marketplace|craigslist|ebay|wallapop|leboncoin|kleinanzeigen|gratis|vendo|gratuit|" +
		"vends|abzugeben|kostenlos|charity|donate|donation|donar|donacion|spende|spenden"
	nwMedia = "song|track|album|title|lyrics|lyric|film|movie|book|novel|show|series|episode|poem|play|" +
		"game|single|called|titled|cancion|tema|pelicula|peli|libro|novela|serie|titulo|letra|chanson|" +
		"titre|morceau|livre|roman|lied|titel|buch|folge|playlist|spotify|band|singer"
	nwBoss = "mom|mum|mother|mama|mommy|madre|mami|mere|maman|mutter|mutti|boss|jefe|jefa|chef|cheffe|" +
		"patron|patronne|teacher|profe|profesora|profesor|prof|lehrer|lehrerin|coach|entrenador|trainer|" +
		"sister|brother|hermana|hermano|soeur|frere|schwester|bruder|" +
		"grandma|abuela|grandmere|oma|manager"
	nwCause = "if|when|once|cuando|si|quand|lorsque|wenn|falls|sobald|grades|late|deadline|car|room|mess|bill|" +
		"phone|broke|dented|forgot|finds|sees|notas|tarde|coche|cuarto|factura|rompi|olvide|voiture|notes|" +
		"retard|chambre|facture|casse|oublie|noten|spat|zimmer|rechnung|kaputt|vergessen|broke|broken|ruined|" +
		"stained|spilled|lost|scratched|crashed|missed|dress|sweater|shirt|vase|rompi|rompio|roto|perdi|manche|" +
		"choque|estropee|arruine|vestido|jarron|tache|rate|abime|renverse|robe|pull|kleid|pulli|verloren|" +
		"verpasst|zerkratzt|verschuttet|ruiniert|vase"
	nwBossVeto = "hit*|hits|beat*|hurt*|punch*|choke*|pega*|golpe*|frappe*|cogne*|schlag*|schlagt|verprugel*|" +
		"told|tell|telling|dije|digo|conte|contar|dit|dire|erzahl*|gesagt|afraid|scared|miedo|peur|angst|" +
		"really|literally|seriously|verdad|vraiment|wirklich|ernst|knife|gun|weapon|cuchillo|pistola|arma|" +
		"couteau|arme|messer|waffe|pistole|threatened|amenaza*|menace*|droht|gedroht"
	nwFood = "cooking|chopping|peeling|slicing|onion|onions|kitchen|papercut|carrots|potatoes|bread|tomato|" +
		"tomatoes|avocado|vegetables|veg|cocinando|cocinar|cebolla|pelando|patatas|papas|cocina|tomate|" +
		"verduras|cuisine|cuisinant|epluchant|oignon|oignons|legumes|carottes|tomates|" +
		"kochen|kuche|gemuse|zwiebel|zwiebeln|brot|kartoffeln|tomaten|schalen"
	nwHyper = "embarasment|embarrassment|embarrased|boredom|laughter|laughing|thirst|hunger|cuteness|shame|cringe|" +
		"heat|curiosity|jealousy|envy|excitement|suspense|fright|cold"
	nwHyperEs = "verguenza|risa|hambre|sed|sueno|frio|calor|ganas|envidia|aburrimiento|aburimiento|cansancio|" +
		"susto|miedo|celos|curiosidad|asco|ternura|nervios|emocion|impaciencia"
	nwHyperFr = "rire|honte|faim|soif|fatigue|froid|chaud|chaleur|peur|ennui|envie|trouille|sommeil|jalousie|" +
		"curiosite|rigoler|flemme|impatience|stress|gene"
	nwHyperDe = "hunger|durst|scham|lachen|langeweile|neugier|hitze|kalte|angst|mudigkeit|peinlichkeit|" +
		"sehnsucht|aufregung|ungeduld|lust|heimweh"
	// nwRole: a professional speaking of their work ("as a nurse", "als
	// psychologin", "en tant qu'infirmière", "como enfermera")
	nwRoleEn = "nurse|pharmacist|doctor|physician|gp|paramedic|therapist|psychologist|psychiatrist|counselor|" +
		"counsellor|teacher|midwife|carer|caregiver|volunteer|clinician|chaplain"
	nwRoleEs = "enfermera|enfermero|farmaceutica|farmaceutico|medica|medico|paramedico|psicologa|psicologo|" +
		"psiquiatra|terapeuta|orientadora|orientador|profesora|profesor|voluntaria|voluntario|matrona"
	nwRoleFr = "infirmiere|infirmier|pharmacienne|pharmacien|medecin|psychologue|psychiatre|therapeute|" +
		"conseillere|conseiller|professeure|professeur|benevole|ecoutante|ecoutant|sage"
	nwRoleDe = "krankenschwester|pfleger|pflegerin|apothekerin|apotheker|arztin|arzt|psychologin|psychologe|" +
		"psychiaterin|psychiater|therapeutin|therapeut|sozialarbeiterin|sozialarbeiter|lehrerin|lehrer|hebamme|" +
		"notfallsanitater|notfallsanitaterin|sanitater|sanitaterin|polizist|polizistin"
	// nwRiskTopic: what such a professional asks about
	nwRiskTopic = "suicid*|suizid*|selbstmord*|overdose*|sobredosis|surdose*|uberdosis|selfharm|self|autolesion*|" +
		"scarification*|selbstverletz*|ideation|ideas|idees|gedanken|pensamientos|pensees|thoughts|risk|riesgo|" +
		"risque|risiko|attempts|intentos|tentatives|versuche|suizidversuche [suicid*|suizid*|de|of|harm|noires|negras|dark] " +
		"[suicid*|suizid*|thoughts|ideation]"
	// nwProVeto: the speaker's own danger beside the role
	nwProVeto = "myself|matarme|suicidarme|umbringen|mich|my|mi|ma|mes|mein|meine|meinen"
	nwDie     = "die|dies|died|dying|dead"
	nwDieEs   = "morir|morirme|muero|mori|moria|muriendo|moriria|muerto|muerta|muertos|muertas|muere"
	nwDieFr   = "mort|morte|morts|mortes|mourir|meurs|meurt|mourais|mourrai|mourrais|mouru|creve|crever|crevee|crevais"
	nwDieDe   = "sterbe|sterben|stirbt|starb|gestorben|sterb|sterbst"
	nwLaugh   = "lol|lmao|lmfao|rofl|haha*|hehe*|jaja*|jeje*|jiji*|mdr|ptdr|xd|hihi*|kek|lel"
)

// moveDomain: leaving a job or a flat, as a phrase; no single word
// ("last", "house") is enough.
var moveDomain = []string{
	"moving out|house|flat|home|abroad|in|to|day|soon|away", "moved to|in|out", "new flat|apartment|house|job|place|city|home",
	"last day at|of|in", "my last day|shift|week", "leaving the|my company|job|firm|office|team", "farewell|leaving party|drinks",
	"retirement|retiring|relocating|relocation", "me mudo|mudamos|mudare", "nos mudamos", "mudanza", "nuevo piso|trabajo|curro",
	"ultimo dia", "me jubilo", "jubilacion", "demenage*", "nouvel appart|appartement|emploi", "nouveau travail|job|poste",
	"dernier jour", "pot de depart", "retraite", "umzug", "ziehe|ziehen um", "umziehen", "neue wohnung|stelle",
	"neuen job", "letzter tag|arbeitstag", "abschiedsfeier", "ruhestand", "rente",
	"partir vivre", "irme|nos|me vamos|voy a vivir", "move|moving abroad|overseas", "auswandern|auswandere|wandere aus",
}

// saleDomain: an offer to whoever wants it.
var saleDomain = []string{nwSale, "anyone|anybody|who want|wants|need|needs|interested", "free to a|any good home",
	"alguien lo|la|los|las quiere|quieres|necesita", "quien lo|la quiere", "qui veut|veux|en veut|est interesse",
	"wer will|mochte|braucht", "zu verschenken", "for free", "pick up|collection", "ca|cela interesse",
	"interesse qqn|quelquun|quelqu", "interessiert jemand|wen", "le interesa a alguien", "alguien interesado|interesada"}

// giveVeto: words that make a giveaway or a goodbye a warning sign.
var giveVeto = []string{
	"not|no|never|nicht|plus|nunca|jamais ~2 need|needed|necesito|necesitare|necesitar|brauche|brauch|brauchen|besoin",
	"need|necesito|brauche|besoin ~3 anymore|ya|mehr|plus", "last one|time", "el|la ultimo|ultima", "le|la dernier|derniere",
	"der|die|das letzte", "matters|importa|compte|wichtig", "gone|forever|siempre|toujours|immer",
	"after|despues|apres|nach|when|cuando|quand|wenn i|yo|je|ich am|estoy|suis|bin gone|muerto|mort|tot|weg",
	"not be|not around|not here|ya no este|plus la|nicht mehr da",
}

// negDefs: the explanations. Ids are reason-like ("neg.hyperbole") for
// tests and reading; a lowered result carries no reason (none has none).
var negDefs = []negDef{
	{id: "neg.hyperbole", cues: []string{
		// "dying of embarrassment", "died laughing", "dying to know"
		nwDie + " of|from|with [the] " + nwHyper,
		nwDie + " laughing|laughter",
		"dying|die to know|see|try|meet|hear|tell|find|eat|watch|visit|read|show|hug|talk|ask|play|" +
			"travel|buy|wear|listen|taste",
		"feet|back|legs|knees|neck|shoulders|head|shoes|heels|heat|suspense|traffic|cold|noise|commute|humidity|" +
			"queue|line|wait|waiting|cliffhanger|curiosity|boots ~2 killing|kiling me",
		"would|could kill for [a|an|some]",
		// es: "me muero de risa", "me quiero morir de la vergüenza"
		"[me] [quiero|voy|casi|estoy|iba|estaba|a] " + nwDieEs + " de|del [la|el|tanta|mucha|pura|puro] " + nwHyperEs,
		"me mato|mate|matamos|matando|matandome a|estudiando|trabajando|entrenando|corriendo|limpiando " +
			"estudiar|trabajar|currar|correr|entrenar|limpiar|leer|practicar|ensayar|escribir|cocinar|caminar|" +
			"nadar|bailar|repasar|hacer|ir|andar|pedalear|ahorrar|pensar|buscar",
		"me mato|mate|estoy|matando|matandome estudiando|trabajando|entrenando|corriendo|limpiando",
		"calor|frio|curiosidad|espera|suspenso|tension|tacones|zapatos|pies|espalda|trafico ~2 me [esta|estan] " +
			"matando|mata|mato|matan",
		"calor|frio|curiosidad|espera|suspenso|tension|tacones|zapatos|pies|espalda|trafico ~2 esta|estan matandome",
		"me mata|matan la|el|los|las curiosidad|espera|calor|frio|pies|espalda|zapatos|tacones",
		// fr: "mort de rire", "je meurs d'envie", "je me tue à travailler"
		nwDieFr + " de|du|d [la|le|l] " + nwHyperFr,
		"me tue|tuer a|au travail|travailler|bosser|etudier|reviser|courir|repeter|expliquer|dire|tache|la",
		"pieds|dos|chaleur|bruit|chaussures|talons|suspense|attente|curiosite|froid ~2 me tue|tuent",
		// de: "ich lach mich tot", "ich sterbe vor Hunger"
		"lach|lache|lachen|lachte|lacht|lachst|arbeite|lerne|schufte|argere|argert|langweile|renne|freue|" +
			"trainiere mich|uns|sich|dich [noch|fast|gerade|echt|total] tot|kaputt|schlapp|krumm",
		"totgelacht|totlachen|totlache|totarbeiten|totgearbeitet|totgeargert|totargern|totlangweilen|totgelangweilt|" +
			"kaputtgelacht|schlappgelacht",
		nwDieDe + " [ja|fast|gleich|noch|echt|gerade] vor [lauter] " + nwHyperDe,
		"hitze|spannung|larm|fuse|rucken|schuhe|kalte|neugier|warterei ~3 bringt|bringen mich [noch|gleich|echt] um",
		// "ces bouchons vont me tuer un jour", "los atascos me van a matar": a
		// nuisance that will be the death of one
		"bouchons|embouteillages|trafic|circulation|travaux|voisins|impots|factures|reunions ~4 vont|va [finir] [par] me tuer",
		"atascos|trafico|obras|vecinos|impuestos|facturas|reuniones ~3 me van|va a matar",
		"traffic|commute|roadworks|neighbours|neighbors|taxes|bills|meetings ~3 will|are going|is going [to] kill me",
		"stau|baustelle|nachbarn|steuern|rechnungen|meetings ~3 bringt|bringen mich [noch|eines] [tages] um",
	}},
	{id: "neg.drill", veto: []string{"myself|matarme|suicidarme|umbringen", "me tuer|suicider"}, cues: []string{
		// suicides as a sprint drill: plural, after a verb of doing or running
		"ran|run|running|runs|do|doing|did|done|more|of|sprint|sprinting|us|hicimos|hacer|correr|corrimos|" +
			"fait|faire|courir|laufen|gelaufen [do|run|some|the|a|few|those|unos|des] [few|of] suicides|suicidios|" +
			"suicides|sucidios",
		"suicide|suicidio sprints|drills|lines|runs|sprint|drill",
	}},
	{id: "neg.dye", cues: []string{
		// "dying my roots": the object is hair
		"dying|dye|dyed|dyeing|died|die|tenir|teindre|farben|farbe [my|her|his|the|their|our|mis|mes|meine] " +
			"hair|roots|beard|eyebrows|bangs|fringe|highlights|tips|pelo|puntas|raices|cheveux|racines|haare|spitzen",
		"die|mir|sich haare|haar|spitzen|augenbrauen|strahnen ~2 farben|farbe|blondieren|tonen|schneiden|kurz|rot|" +
			"blau|grun|pink|lila|blond|schwarz",
	}},
	{id: "neg.lockout", cues: []string{
		// locked out of the flat: no one shut in
		"locked|shut|lock|locking [myself|me|us|ourselves] out",
		"me|nos quede|quedamos|quedado|deje|deje fuera|afuera",
		"deje|olvide las llaves dentro",
		"enferme|enfermee dehors", "ausgesperrt|ausgeschlossen",
	}},
	{id: "neg.behind", cues: []string{
		// "the worst is behind me"
		"worst|past|that|hardest ~3 is|are|now|all|lies behind me|us",
		"le|c pire|passe ~3 derriere moi|nous",
		"lo peor ~3 atras|detras",
		"das schlimmste ~3 hinter mir|uns",
		// "c'est derrière moi", "das liegt lange hinter mir": told as over
		"ce|cela|ca est|sont [bien|tout|loin|maintenant|depuis] [longtemps] derriere moi|nous",
		"ist|liegt [lange|alles|weit|schon|langst] hinter mir|uns",
		"ya [lo] [tengo|quedo|queda|esta] atras",
	}},
	{id: "neg.meeting_die", domain: [][]string{{"if|another|otra|otro|encore|wenn|falls|si", "one more",
		"un|une autre", "noch ein|eine|einen|einer"}, {"meeting|meetings|call|zoom|lecture|queue|line|traffic|ad|ads|email|emails|slide|slides|" +
		"commercial|song|presentation|spreadsheet|reunion|llamada|cola|anuncio|reunion|appel|pub|cours|queue|" +
		"besprechung|meeting|vorlesung|werbung|schlange|telko|lunch|dinner|breakfast|food|coffee|pizza|almuerzo|" +
		"comida|cena|desayuno|cafe|dejeuner|diner|repas|petit|mittagessen|abendessen|essen|kaffee|fruhstuck"}}, cues: []string{
		"i [will|would|am|ll] [going] [to] [literally] [actually] die",
		"me muero|muero|morire",
		"je vais mourir|meurs|creve|crever",
		"ich sterbe|sterb|sterbe ich",
	}},
	{id: "neg.laughing", domain: [][]string{{"@laugh", "hilarious|funny|hysterical|joke|meme|memes|video|comedy|" +
		"gracioso|graciosisimo|chiste|meme|video|drole|blague|lustig|witz"}}, cues: []string{
		// "oh my god i'm dying, that's hilarious"
		"i am [literally|actually|so|just] dying|dead|deceased|crying",
		"me muero|estoy muerta|estoy muerto",
		"je suis mort|morte|je meurs",
		"ich sterbe|ich bin tot",
	}},
	{id: "neg.lost_time", cues: []string{
		// "three hours gone", "200 euro weg"
		"[all] [my] [the] hours|minutes|work|progress|money|file|files|data|euros|euro|dollars|pounds|bucks|quid|" +
			"horas|dinero|trabajo|heures|argent|travail|stunden|geld|arbeit ~1 gone|lost|wasted|down|perdidas|" +
			"perdido|perdu|perdues|weg|futsch|verloren",
	}},
	{id: "neg.exhausted", cues: []string{
		// "I can't walk anymore", "ich kann nicht mehr laufen": the body, not life
		"cannot|can|could|cant [not|even|barely|literally] [even|barely] walk|climb|lift|raise|bend|squat|type|sit " +
			"!on|forward|past|ahead|anymore|through|with",
		"cannot|can|could|cant [not|even|barely|literally] [even|barely] move|feel my legs|arms|feet|calves|quads|fingers",
		"cannot|can|could|cant [not|even|barely|literally] [even|barely] lift|raise|move|feel [my|the] arms|legs|feet|" +
			"body|hands|shoulders|head|phone|bag|coffee",
		"cannot|can|could|cant [not|even|barely|literally] [even|barely] stand|get up",
		"no puedo [ni] [siquiera] caminar|andar|moverme|subir|bajar|levantarme|sentarme|agacharme|mover|" +
			"levantar",
		"peux|pouvais|arrive [pas|plus|meme] [pas|plus|meme] marcher|bouger|descendre|monter|lever|asseoir|" +
			"plier|porter",
		"kann|konnte [ich] [nicht|kaum] [mehr|richtig|gut|noch] laufen|gehen|stehen|sitzen|aufstehen|treppen|" +
			"tippen|schreiben|bewegen|heben",
		"sens|sentais [plus|pas|meme] [plus] mes|les jambes|bras|pieds|mollets|cuisses",
		"no siento las|mis piernas|brazos|pies|gemelos",
		"spure|spur meine beine|arme|fusse nicht mehr",
	}},
	{id: "neg.sport", domain: [][]string{{nwSport}}, cues: []string{
		// "coach made us run suicides", "the trainer is trying to kill me"
		"suicides|suicidios|suicide|suicidio|sue|suicida sprint*|drill*|run|runs|line|lines|ladder*|sides",
		"suicides|suicidios|sucidios|suicidos",
		"killed|kiled|destroyed|murdered|wrecked|ruined|destroy|kill|kil|killing|kiling|destroying|smoked|" +
			"torched|slaughtered|mato|mata|matando|destrozo|destrozado|destrozados|tue|tuer|tues|detruit|" +
			"detruits|detruite|massacre|massacres|umgebracht|zerstort|gekillt|fertig|abgeschlachtet me|us|mich|uns|nos|nous|" +
			"ma|nous|them|everyone|everybody",
		"trying|tried|going to kill|kil|destroy|murder me|us",
		"me|nos mato|mata|matado|destrozo|destrozado|destrozaron|mataron",
		"me|nos ha|han|esta|estan matado|matando|destrozado|destrozando",
		"me|m|nous a|ont tue|tuee|tues|detruit|detruits|detruite|massacre|achevee|acheve",
		"hat|haben mich|uns [heute|total|richtig] umgebracht|zerstort|fertig|kaputt",
		"i [really] [thought] [i] [was|am] [going] [to] die|dying|dead",
		"i [literally|really|nearly|almost|seriously] thought [i] [was|would|am] [going] [to] die|dying|dead|pass",
		"nearly|almost|basically|literally [just] died|die|dead|passed|puked|pass",
		"passed|pass|blacked|black out",
		"legs|quads|arms|lungs|calves|body|muscles ~2 dead|dying|died",
		"i [am] [literally] dead|dying ~1 tired|after|today",
		"dead tired",
		"casi me muero|moria|mori",
		"me muero|mori",
		"estoy|estamos|quede|acabe muerto|muerta|muertos|muertas|reventado|reventada",
		"muerto|muerta|muertos|muertas|morirme",
		"ai [cru] [failli] mourir|crever|creve",
		"je suis mort|morte|morts|mortes|creve|crevee|cuit|cuite|detruit|detruite|rince",
		"suis|es|sommes mort|morte|morts|mortes|creve|crevee|cuit|cuite|detruit|detruite|rince",
		"ich sterbe|sterb",
		"bin [fast|halb|total|komplett|echt] tot|gestorben|hin|fertig",
		"sterbe|sterb|gestorben|tot [bei|nach|vor|aber]",
		"tot aber glucklich",
		"bin [total|komplett|voll] tot",
	}, veto: []string{"myself|matarme|suicidarme|umbringen", "me tuer|suicider"}},
	{id: "neg.game", domain: [][]string{{nwGame}}, cues: []string{
		// "got killed 4 times by the jungler", "me mataron en el fortnite"
		"got|get|getting|been|keep|kept|gets|getting killed|kiled|shot|headshot|headshotted|sniped|slaughtered|" +
			"destroyed|wrecked|rekt|stomped|murdered|oneshot|one|ganked|camped|spawnkilled|ganked",
		"killed|kiled|kills|kils|killing|kiling|shot|sniped me|us",
		"died|die|dying|dead|death|deaths|muri|mori|muero|mueres|morimos|mort|morts|meurs|meurt|gestorben|" +
			"sterbe|stirbt|tot ~3 times|again|veces|fois|mal|wieder|schon|ten|twenty|so",
		"i|we died|die|dying|keep",
		"kept|keep dying|died",
		"me|nos mataron|matan|mato|mata|matando",
		"me|nos han matado",
		"me|nous [suis|sommes] fait|fais|faite|faire tuer|tues|tue",
		"je|on suis|est mort|morte|morts",
		"wurde|wurden|werde|bin|sind [schon] [wieder] [funfmal|dreimal|zweimal|oft] [vom|von|im] gekillt|getotet|" +
			"gekilt|gestorben",
		"gekillt|getotet|gekilt",
		"rage quit|quitted|quit|rageq*",
	}, veto: []string{"myself|matarme|suicidarme|umbringen", "me tuer|suicider", "for real", "de verdad", "pour de vrai", "echt jetzt", "in real life", "irl"}},
	{id: "neg.hair", domain: [][]string{{nwHair}}, cues: []string{
		// "dying my hair", "the hairdresser cut way too much off"
		"dying|dye|dyed|dyeing|died|die [my|her|his|the|their|our] hair|roots|beard|eyebrows|bangs|fringe",
		nwCut + " ~3 " + nwHair + "|off|short|much|too",
		nwHair + " ~3 " + nwCut,
		"me|se [lo] " + nwCut + " ~2 " + nwHair,
		"ich|mir|hab|habe|hat|er|sie ~3 " + nwCut,
	}, veto: []string{nwSelfBody}},
	{id: "neg.accident", domain: [][]string{{nwFood}}, cues: []string{
		// "cut my finger chopping onions", "me corté pelando patatas"
		"cut|sliced|nicked|burned|burnt|cuts ~2 finger|fingers|thumb|fingertip|hand",
		"me|se corte|corto|corto|quemado|queme ~3 " + nwFood + "|dedo|mano",
		"me|m suis coupe|coupee|brule|brulee ~4 " + nwFood + "|doigt|main",
		"finger|daumen ~2 geschnitten|verbrannt|gestochen",
		"beim|bei gemuse|zwiebel|zwiebeln|brot|kochen|kartoffeln|tomaten ~1 schneiden|schalen",
	}, veto: []string{nwSelfBody + "|again|otra|encore|wieder|always|siempre|toujours|immer"}},
	{id: "neg.pet", cues: []string{
		// "my cat got into a bottle of ibuprofen", "how do i split a pill for my dog"
		nwPet + " ~2 ate|eaten|chewed|swallowed|licked|got|gotten|found|into|comio|trago|mordio|mordisqueo|" +
			"mange|avale|croque|mordille|hat|gefressen|genagt|verschluckt|angeknabbert|ingested ~5 " + nwMed + nwMedTail,
		nwMed + " ~3 for|to|into|in|para|a|al|pour|au|a|fur|dem|den ~2 " + nwPet,
		"give|gave|giving|dar|darle|le|donner|geben|split|crush|partir|parto|couper|teile ~3 " + nwPet + " ~4 " + nwMed + nwMedTail,
		"split|crush|partir|parto|couper|coupe|teile|teilen|zerkleinern ~3 " + nwMed + " ~4 " + nwPet,
	}},
	{id: "neg.thing", cues: []string{
		// "my plant is dying", "my laptop died", "se me murió el móvil"
		nwThing + " [is|was|just|has|finally|totally|completely|already|kind|keeps] [of] [been|is] " +
			"dying|died|dead|die|dies|muerto|muerta|murio|muere|muriendo|mort|morte|meurt|creve|tot|gestorben|" +
			"stirbt|abgestorben|leer",
		"dead|dying|died battery|phone|laptop|plant|plants|car|charger",
		"se me murio|muere|muerto el|la|mi " + nwThing,
		"mon|ma|le|la|mes " + nwThing + " est|sont mort|morte|morts|mortes|creve|crevee",
		nwThing + " ist|sind [schon] [wieder] [total] tot|gestorben|abgestorben|leer|hinuber",
		nwThing + " est|sont en train de mourir|crever",
		nwThing + " se meurt|meurt|muere|stirbt|se esta muriendo|esta muriendo",
		nwThing + " se|esta|estan [esta] muriendo|muriendose",
	}},
	{id: "neg.media", cues: []string{
		// "who dies at the end", "¿quién muere al final?", "wer stirbt am Ende"
		"who|quien|qui|wer [is|gets|will|does] [going] [to] dies|die|died|killed|muere|murio|muerto|meurt|" +
			"mort|meurent|stirbt|starb|stirbt|sterben|kills|killed [at|in|al|a|am] [the|la|le] [end|final|fin|ende|schluss]",
		"does|did|do|will anyone|someone|somebody|anybody|character|characters die|dies",
		"muere|murio alguien|alguno",
		"muere|murio algun personaje",
		"quelquun|personnage meurt|mort|meurent",
		"stirbt|starb jemand",
	}},
	{id: "neg.idiom_threat", domain: [][]string{{nwCause}}, veto: []string{nwBossVeto}, cues: []string{
		// "my boss is going to kill me if …": the speaker's mishap, not a threat
		nwBoss + " [is|will|would|gonna|going|s] [going] [to] [literally] [absolutely] kill|kil|murder me",
		nwBoss + " me va|iba a matar",
		nwBoss + " me mata|matara|mataria",
		nwBoss + " va|vont me tuer",
		nwBoss + " me tue|tuera|tuerait",
		nwBoss + " bringt|wird|wurde mich [noch] [glatt] [sicher] um|umbringen",
	}},
	{id: "neg.moving", domain: [][]string{moveDomain}, veto: giveVeto, cues: []string{
		// leaving a job or a flat: goodbyes and things given away
		"said|saying|say|said goodbye|bye|farewell to|everyone|all",
		"said|saying|say [my|our|all] goodbyes|farewells|byes",
		"gave|give|giving|given|handing|handed away|out|off",
		"gave|given|giving ~4 to my|a|the",
		"leaving|moving for good",
		"regale|regalo|regalando|regalado|despedirme|despedida|despedimos|despedi",
		"donne|donnais|donner|donnerai|adieux",
		"dit|dire|dis au revoir",
		"verschenke|verschenkt|verschenken|verabschiedet|verabschiede|abschied",
	}},
	{id: "neg.sale", domain: [][]string{saleDomain}, veto: giveVeto, cues: []string{
		"giving|give|gave|given away|out",
		"regalo|regalando|regala|donne|donnes|verschenke|verschenkt|verschenken",
	}},
	{id: "neg.caffeine", cues: []string{
		"overdose|overdosed|overdosing|od|sobredosis|surdose|overdose|uberdosis|dosis ~3 coffee|caffeine|" +
			"espresso*|cafe|cafeina|kaffee|koffein|sugar|azucar|sucre|zucker|chocolate|chocolat|schokolade|" +
			"netflix|memes|tiktok|cuteness|matcha|redbull|energy",
		"coffee|caffeine|espresso*|cafe|cafeina|kaffee|koffein|sugar|azucar|sucre|zucker|chocolate|" +
			"chocolat|schokolade|koffein|netflix ~2 overdose|overdosed|od|sobredosis|surdose|uberdosis|ueberdosis",
	}},
	{id: "neg.professional", domain: [][]string{{"as|am a|an [school|hospital|ward|er|icu|crisis|hotline|youth|community|psychiatric|night|practice|mental] [health] " + nwRoleEn, "social worker", "como|soy " + nwRoleEs,
		"que|comme|suis " + nwRoleFr, "als|bin " + nwRoleDe}}, veto: []string{nwProVeto}, cues: []string{
		// "as a nurse, how do I ask a patient about suicidal thoughts": a
		// professional asking how to ask or answer about someone else's risk
		"ask|asking|tell|answer|respond|screen|talk|bring|raise|explain ~6 ~3 " + nwRiskTopic,
		"pregunto|preguntar|preguntarle|pregunte|digo|decir|decirle|hablar|hablarle|abordar|explicar ~6 ~3 " + nwRiskTopic,
		"demander|demande|dire|parler|aborder|poser|expliquer|repondre ~6 ~3 " + nwRiskTopic,
		"frag|frage|fragen|sage|sagen|spreche|sprechen|ansprechen|erklare|antworte ~6 ~3 " + nwRiskTopic,
		// "como enfermera veo intentos de suicidio cada semana": cases seen at work
		"see|seeing|saw|treat|treating|treated|veo|vemos|atiendo|atendemos|vois|voit|voyons|soigne|soignons|" +
			"sehe|sehen|behandle|behandeln ~3 " + nwRiskTopic,
	}},
	{id: "neg.dead_inside", domain: [][]string{{"@laugh"}, {nwMundane}}, cues: []string{
		// "dead inside lol, third meeting about the same slide"
		"dead|numb inside",
		"muerto|muerta|mort|morte|morts|muertos por|a dentro|interieurement|interieur",
		"muerto|muerta|mort|morte|interieurement",
		"innerlich|innen tot",
	}},
}

// strongSet: concepts that read as danger wherever they stand; the masked
// remainder of an explained utterance must have none of them.
var strongSet = mustConceptSet("die|kill|suicide|selfharm|selfkill|otherkill|otherharm|harmdone|cutword|med|" +
	"weapon|rope|noose|poison|fumes|overdosed|blood|endit|betterdead|hopedie|nowake|cantlive|threat|threatverb|" +
	"followme|victim|farewell|giveaway|rehearse|unconscious|perch|tracks|jump|took")

func mustConceptSet(alts string) cset {
	c, err := conceptSet(alts)
	if err != nil {
		negErr = fmt.Errorf("safety: negatives: %w", err)
	}
	return c
}

// negIndex: the explanations' patterns, indexed by the words a match can
// start with (as the rules are).
type negIndex struct {
	defs     []negCompiled
	byWord   map[string][]negCand
	byPrefix prefixIndex[negCand]
}

type negCompiled struct {
	id         string
	cues, veto []pattern
	domain     [][]pattern
	laugh      []bool // per domain group: "@laugh" satisfies it
}

// negCand: pattern pat of def; kind 0 cue, 1 veto, 2+g domain group g.
type negCand struct{ def, kind, pat int }

var negErr error

var negTable = func() *negIndex {
	ix, err := compileNegatives(negDefs)
	if err != nil {
		negErr = err
	}
	return ix
}()

func compileNegatives(defs []negDef) (*negIndex, error) {
	ix := &negIndex{byWord: map[string][]negCand{}}
	var errs []string
	add := func(def, kind int, src string, dst *[]pattern) {
		p, err := compilePattern(src)
		if err != nil {
			errs = append(errs, err.Error())
			return
		}
		c := negCand{def, kind, len(*dst)}
		*dst = append(*dst, p)
		words, prefixes := p.firstKeys()
		for _, w := range words {
			ix.byWord[w] = append(ix.byWord[w], c)
		}
		for _, pr := range prefixes {
			ix.byPrefix.add(pr, c)
		}
	}
	for di, d := range defs {
		nc := negCompiled{id: d.id, domain: make([][]pattern, len(d.domain)), laugh: make([]bool, len(d.domain))}
		ix.defs = append(ix.defs, nc)
		c := &ix.defs[di]
		for _, s := range d.cues {
			add(di, 0, s, &c.cues)
		}
		for _, s := range d.veto {
			add(di, 1, s, &c.veto)
		}
		for g, grp := range d.domain {
			for _, s := range grp {
				if s == "@laugh" {
					c.laugh[g] = true
					s = nwLaugh
				}
				add(di, 2+g, s, &c.domain[g])
			}
		}
	}
	if len(errs) > 0 {
		return ix, fmt.Errorf("safety: negatives: %s", strings.Join(errs, "; "))
	}
	return ix, nil
}

// negSpan is one explained cue span [lo, hi) of def.
type negSpan struct{ def, lo, hi int }

// negScan is the per-utterance state of one scan (on the stack).
type negScan struct {
	spans  [16]negSpan
	n      int
	vetoed uint64 // bit per def
	seen   [32]uint8
}

// scan finds every cue span and which defs have their domains and vetoes.
func (ix *negIndex) scan(toks []string, s *negScan) {
	sig := sigOf(toks)
	hit := func(c negCand, i int) {
		d := &ix.defs[c.def]
		var p *pattern
		switch {
		case c.kind == 0:
			p = &d.cues[c.pat]
		case c.kind == 1:
			p = &d.veto[c.pat]
		default:
			p = &d.domain[c.kind-2][c.pat]
		}
		if !p.mayMatch(&sig) {
			return
		}
		end := p.match(toks, i)
		if end < 0 {
			return
		}
		switch {
		case c.kind == 0:
			if s.n < len(s.spans) {
				s.spans[s.n] = negSpan{c.def, i, end}
				s.n++
			}
		case c.kind == 1:
			s.vetoed |= 1 << uint(c.def)
		default:
			s.seen[c.def] |= 1 << uint(c.kind-2)
		}
	}
	for i, t := range toks {
		for _, c := range ix.byWord[t] {
			hit(c, i)
		}
		for _, pc := range ix.byPrefix.candidates(t) {
			if len(t) >= len(pc.prefix) && t[:len(pc.prefix)] == pc.prefix {
				hit(pc.c, i)
			}
		}
	}
}

// active: def's domains are all present and no veto fired.
func (ix *negIndex) active(s *negScan, def int, laugh bool) bool {
	if s.vetoed&(1<<uint(def)) != 0 {
		return false
	}
	d := &ix.defs[def]
	for g := range d.domain {
		if s.seen[def]&(1<<uint(g)) == 0 && !(d.laugh[g] && laugh) {
			return false
		}
	}
	return true
}

// negHold is what an explanation lowered: DetectTurn restores it when the
// recent turns carry a risk cue.
type negHold struct {
	level  Level
	reason string
}

// restore gives back the held level when risky is true (an earlier turn
// was elevated or named means): context never lowers a level.
func (h negHold) restore(res Result, risky bool) Result {
	if risky && h.level > res.Level {
		res.Level, res.Reason = h.level, h.reason
	}
	return res
}

// explainNegatives lowers a to none when explanations cover every cue that
// raised it (see the top of this file). core is the utterance without a
// trailing laugh, toks its squashed tokens.
func (d *Detector) explainNegatives(core string, toks []string, a analysis, laugh, withModel bool) analysis {
	if a.level == LevelNone || negTable == nil || len(toks) > 96 {
		return a
	}
	var s negScan
	negTable.scan(toks, &s)
	var mask [128]bool
	found := false
	for _, sp := range s.spans[:s.n] {
		if negTable.active(&s, sp.def, laugh) {
			for k := sp.lo; k < sp.hi && k < len(mask); k++ {
				mask[k] = true
				found = true
			}
		}
	}
	if quotedTitles(core, toks, mask[:]) {
		found = true
	}
	if !found {
		return a
	}
	bp := d.bufs.Get().(*[]string)
	rest := (*bp)[:0]
	for i, t := range toks {
		if !mask[i] {
			rest = append(rest, t)
		}
	}
	clean := d.quiet(rest, withModel)
	clear(rest)
	*bp = rest[:0]
	d.bufs.Put(bp)
	if !clean {
		return a
	}
	a.held = negHold{a.level, a.reason}
	a.level, a.reason = LevelNone, ""
	a.act, a.time, a.means, a.place, a.strongMeans = false, false, false, false, false
	return a
}

// quiet reports that rest (an utterance with its explained spans masked)
// reads as nothing: no rule, no frame, no strong danger concept, no model
// verdict.
func (d *Detector) quiet(rest []string, withModel bool) bool {
	if len(rest) == 0 {
		return true
	}
	if r := d.analyzeRules(rest); r.level != LevelNone || r.means || r.act {
		return false
	}
	x := d.extractors.Get().(*extractor)
	defer d.extractors.Put(x)
	if d.model != nil {
		x.known = d.model.lex
	}
	x.prepare("", rest)
	if x.frame.level != LevelNone {
		return false
	}
	for _, c := range x.sets {
		if c.any(strongSet) {
			return false
		}
	}
	if !withModel || d.model == nil || !x.risk {
		return true
	}
	text := strings.Join(rest, " ")
	sc, fh, _ := d.model.scores(text, rest, x)
	lvl, _ := d.model.level(sc)
	return lvl == LevelNone && fh.level == LevelNone
}

// quotedTitles marks the tokens of a quoted stretch ("…", “…”, «…», „…“)
// when the utterance names a song, a film, a book or the like: a title is
// no one's own words. It reports whether it marked any.
func quotedTitles(core string, toks []string, mask []bool) bool {
	if !strings.ContainsAny(core, "\"“”«»„") {
		return false
	}
	media := false
	for _, t := range toks {
		if negMedia[t] {
			media = true
			break
		}
	}
	if !media {
		return false
	}
	marked := false
	rest := core
	for {
		i := strings.IndexAny(rest, "\"“«„")
		if i < 0 {
			return marked
		}
		_, w := firstRune(rest[i:])
		rest = rest[i+w:]
		j := strings.IndexAny(rest, "\"”»“")
		if j < 0 {
			return marked
		}
		title := squashAll(repairTokens(normalize(rest[:j], nil), nil, nil), nil)
		_, w = firstRune(rest[j:])
		rest = rest[j+w:]
		if markSeq(toks, title, mask) {
			marked = true
		}
	}
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

// markSeq marks the first occurrence of seq in toks.
func markSeq(toks, seq []string, mask []bool) bool {
	if len(seq) == 0 || len(seq) > len(toks) {
		return false
	}
outer:
	for i := 0; i+len(seq) <= len(toks) && i+len(seq) <= len(mask); i++ {
		for k, w := range seq {
			if toks[i+k] != w {
				continue outer
			}
		}
		for k := range seq {
			mask[i+k] = true
		}
		return true
	}
	return false
}

var negMedia = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(nwMedia, "|") {
		m[squashWord(w)] = true
	}
	return m
}()
