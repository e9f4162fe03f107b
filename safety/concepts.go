package safety

import (
	"math/bits"
	"strings"
)

func or(a, b cset) cset { a.or(b); return a }

// conceptID returns the index of a concept by name; it panics on an unknown
// name, a programming error the package tests catch at init.
func conceptID(name string) int {
	i, ok := concepts.byName[name]
	if !ok {
		panic("safety: unknown concept " + name)
	}
	return i
}

// Concepts are classes of words that mean the same thing for safety
// purposes, in every language the detector reads ("pills", "pastillas",
// "cachets", "tabletten" are all "med"). The model tier sees each concept a
// word belongs to, and ordered pairs and triples of concepts a few words
// apart ("self>took>med", "other>hit>self"), so what it learns from one
// wording and one language carries over to synonyms and to the other
// languages. Entries are in normalised form (normalize.go): lower case,
// accents folded, contractions expanded ("i am", "do not"), French elisions
// split ("je ai", "me ouvrir"). An entry is a word, a phrase of two or three
// words, a prefix ("suicid*") or a suffix ("*tabletten", for German
// compounds).
var conceptTable = []struct {
	name    string
	entries string
}{
	// ---- who ----
	{"self", "i, me, myself, meself, yo, conmigo, je, moi, ich, mich, mir, selbst, tome, me tome, trague, bebi, estoy, quiero, voy, tengo, hice, compre, escribi, llevo, puse, cerre, abri, prendi, encendi, pienso, siento, estaba, fui, subi, deje, regale, guarde, junte, intente, hab, bin, sitz, sitze, steh, stehe, lieg, liege"},
	{"my", "my, mine, mi, mis, mio, mia, mon, ma, mes, mein, meine, meinem, meinen, meiner"},
	{"other", "he, she, they, him, her, his, their, them, himself, herself, themselves, themself, ella, ellos, ellas, il, elle, ils, elles, lui, leur, er, sie, ihn, ihm, ihr, ihre, sein, seine, someone, somebody, alguien, quelquun, jemand"},
	{"friend", "friend, friends, bestie, bff, mate, buddy, pal, roommate, flatmate, coworker, colleague, classmate, amigo, amiga, amigos, amigas, companero, companera, compa, ami, amie, amis, pote, copine, coloc, collegue, freund, freundin, freunde, kumpel, mitbewohner, mitbewohnerin, kollege, kollegin"},
	{"family", "mom, mum, mother, mama, mommy, dad, father, papa, daddy, stepdad, stepmom, stepfather, stepmother, parents, parent, brother, sister, son, daughter, uncle, aunt, grandpa, grandma, cousin, madre, padre, padrastro, madrastra, papas, padres, hermano, hermana, hijo, hija, tio, tia, abuelo, abuela, primo, prima, mere, pere, maman, beau pere, belle mere, parents, frere, soeur, fils, fille, oncle, tante, mutter, vater, mutti, vati, stiefvater, stiefmutter, eltern, bruder, schwester, sohn, tochter, onkel, tante, opa, oma"},
	{"partner", "boyfriend, girlfriend, husband, wife, partner, ex, fiance, bf, gf, novio, novia, marido, esposo, esposa, pareja, mujer, copain, mari, femme, conjoint, compagnon, compagne, mec, ehemann, ehefrau, mann, frau, partnerin, verlobter"},
	{"child", "kid, kids, child, children, baby, toddler, son, daughter, nino, nina, ninos, hijos, bebe, enfant, enfants, gamin, kind, kinder, baby"},
	{"pet", "cat, cats, dog, dogs, puppy, kitten, pet, pets, fish, rabbit, rabbits, hamster, bird, gato, gata, perro, perra, mascota, chat, chien, chienne, lapin, katze, kater, hund, haustier, kaninchen"},
	// ---- wanting, intending, thinking ----
	{"want", "want, wanted, wanting, wish, wishing, hope, hoping, desire, long, longing, rather, prefer, urge, urges, tempted, crave, quiero, quiere, quisiera, queria, deseo, ganas, ojala, prefiero, preferiria, veux, veut, voulais, voudrais, envie, aimerais, souhaite, prefere, prefererais, will, willst, mochte, moechte, wunsche, wunschte, lust, ware lieber, hatte lust, hoffe, espero, espere, esperando, pray, praying, pido, le pido, rezo, prie, je prie, bete"},
	{"intent", "going, going to, will, gonna, plan, plans, planning, planned, decided, decide, deciding, ready, prepared, about to, intend, intending, determined, imma, finally, tonight is the night, voy, vas, va, vamos, ir, decidi, decidido, decidida, listo, lista, pienso hacerlo, planeando, planeo, vais, prete, pret, prevu, prevois, compte, werde, wird, werden, bereit, entschieden, entschlossen, plane, vorhaben, mache, mach, tue, prepare, preparing, preparando, preparo, bereite"},
	{"think", "think, thinking, thought, thoughts, considering, contemplating, imagine, picture, picturing, fantasize, pensar, pienso, pensando, pensamientos, pensado, pense, penser, pensees, songe, denke, denken, gedanken, uberlege, se me pasa por la cabeza, me pasa por la cabeza, crosses my mind, crossed my mind, me traverse le esprit, geht mir durch den kopf"},
	{"do", "do it, doing it, go through with it, through with it, hacerlo, lo hago, lo hare, lo voy a hacer, le faire, je le fais, vais le faire, mache es, tue es, es tun, es machen, durchziehen, mache ich es, tue ich es, le fais, mache schluss, ich mache schluss"},
	// ---- death and self-harm ----
	{"die", "die, dies, died, dying, dead, death, ded, deceased, morir, morirme, muero, muera, muriera, muerto, muerta, muerte, mori, mourir, meurs, meure, mort, morte, mourrai, crever, creve, sterben, sterbe, stirbt, gestorben, tot, tote, toter, tod, todes"},
	{"kill", "kill, kills, killing, killed, murder, off myself, matar, matarme, mato, mata, matando, suicidar, tuer, tue, tuerai, me tuer, umbringen, umbring*, bring mich um, bringe mich um, bring ich mich um, toten, tote mich, totet, tote"},
	{"suicide", "suicid*, suizid*, selbstmord*, freitod, kms, kys, khs, unalive*, sewerslide, sewer slide, sue aside, sue a side, ctb, catch the bus, toaster bath, lebensmude, self delete"},
	{"selfharm", "self harm*, selfharm*, cut myself, cutting myself, harm myself, hurt myself, hurting myself, burn myself, burning myself, cortarme, me corto, me corte, autolesion*, hacerme dano, me hago dano, lastimarme, quemarme, me quemo, rasguno, scarifi*, automutil*, me couper, me coupe, me faire du mal, me fais du mal, me bruler, me brule, ritz*, geritzt, schneide mich, mich verletzen, verletze mich, mir wehtun, mir weh tun, verbrenne mich, haciendo dano, me estoy lastimando, me estoy quemando con, me lastimo"},
	{"cutword", "cut, cutting, cuts, cutter, scratch, scratching, carve, carving, slice, slicing, slit, cortando, cortes, griffe, kratze, geschnitten, cortar, couper, schneiden"},
	{"end", "end, ends, ending, ended, over, finish, finished, stop, stopping, quit, done, out, acabar, acabe, terminar, termine, fin, final, se acaba, finir, en finir, fini, terminer, arreter, ende, beenden, schluss, aufhoren, vorbei, fertig, dejar de, arreter de, endgultig, definitivamente, definitivement"},
	{"life", "life, live, living, lives, alive, exist, existing, existence, breathing, vida, vivir, viviendo, vivo, viva, existir, vie, vivre, vivant, vivante, exister, leben, lebe, am leben, existieren, weiterleben, da sein, dasein, auf dieser welt sein, auf dieser welt, on this earth, in this world, en este mundo, sur cette terre, dans ce monde"},
	{"sleep", "sleep, asleep, wake, wake up, waking, woke, sleeping forever, dormir, despertar, despierte, dormirme, reveiller, me reveiller, endormir, schlafen, einschlafen, aufwachen, aufzuwachen, wache"},
	{"gone", "gone, go away, disappear, vanish, not be here, not be around, not here, not around, leave this world, away forever, for good, forever, permanently, never come back, desaparecer, irme, no estar, para siempre, disparaitre, partir, pour toujours, plus la, verschwinden, weg, fur immer, nicht mehr da, nie wieder, not going to be here, not going to be around, will not be here, will not be around, no voy a estar aqui, ya no voy a estar, ne serai plus la, je serai plus la, bin ich nicht mehr da, leaving this world, will not see next week, will not see tomorrow, will not make it to"},
	{"burden", "burden, burdens, drain, dragging, drag, in the way, better off without, off without me, waste of space, problem, carga, estorbo, mejor sin mi, fardeau, poids, mieux sans moi, belastung, besser ohne mich, ohne mich besser, im weg, eine last, nur eine last, ne last, last fur, je gene, a weight, dead weight, weight on, weight around"},
	{"hopeless", "hopeless, hopelessness, no hope, lost hope, pointless, no point, the point, meaningless, no future, way out, no way out, never get better, nothing will change, give up, giving up, given up, gave up, sin esperanza, esperanza, sentido, sin salida, salida, futuro, rindo, espoir, sans espoir, sens, issue, avenir, a quoi bon, abandonne, hoffnung, hoffnungslos, sinn, sinnlos, ausweg, zukunft, aufgeben, gebe auf, wozu"},
	{"distress", "can not cope, cope, coping, falling apart, empty, numb, overwhelmed, breaking down, breakdown, drowning, exhausted, worthless, useless, hate myself, hate my life, can not take, can not do this, can not go on, can not handle, can not keep, not okay, not ok, breaking point, rock bottom, dark place, dark thoughts, depressed, depression, miserable, despair, desperate, agony, suffering, pain, hurts, crying, cry, lonely, alone, failure, puedo mas, aguanto, no puedo, vacio, vacia, deprimido, deprimida, depresion, sola, solo, desesperado, desesperada, dolor, sufrimiento, llorar, derrumbando, fondo, agotada, agotado, no valgo, odio, peux plus, en peux plus, tiens plus, vide, deprime, deprimee, depression, seul, seule, desespere, desesperee, douleur, souffrance, pleurer, effondre, fond, epuise, epuisee, deteste, bout, kann nicht mehr, halte, aushalten, leer, depressiv, deprimiert, einsam, allein, verzweifelt, schmerz, weinen, zusammen, erschopft, wertlos, hasse, am ende, nichts wert"},
	{"fear", "scared, afraid, terrified, frightened, fear, panic, miedo, asustada, asustado, aterrada, peur, effraye, effrayee, angst, panik"},
	{"help", "help, help me, please help, ayuda, ayudame, socorro, aide, aidez moi, au secours, hilfe, hilf mir"},
	// ---- means and places ----
	{"med", "pill, pills, tablet, tablets, meds, medication, medications, medicine, medicines, drugs, painkillers, paracetamol, acetaminophen, tylenol, ibuprofen, advil, aspirin, sleeping pills, sleeping tablets, insulin, antidepressants, antidepressant, sertraline, prozac, zoloft, lithium, xanax, valium, oxy, oxycodone, fentanyl, tramadol, opioids, benzos, amitriptyline, prescription, dose, overdose, pastilla, pastillas, pastiyas, pildoras, medicamento, medicamentos, medicinas, calmantes, antidepresivos, insulina, paracetamoles, receta, cachet, cachets, comprime, comprimes, pilule, pilules, medicament, medicaments, doliprane, somniferes, antidouleurs, antidepresseurs, ordonnance, tablette, tabletten, medikament, medikamente, pillen, *tabletten, schmerzmittel, antidepressiva, rezept, packung, armoire a pharmacie, medicine cabinet, botiquin, medikamentenschrank"},
	{"weapon", "gun, guns, pistol, rifle, shotgun, firearm, handgun, bullet, trigger, knife, knives, blade, blades, razor, razors, scissors, pistola, arma, escopeta, rifle, bala, cuchillo, cuchilla, cuchillas, navaja, tijeras, fusil, arme, pistolet, balle, couteau, lame, lames, rasoir, ciseaux, pistole, waffe, gewehr, kugel, messer, klinge, klingen, rasierklinge*, schere"},
	{"rope", "rope, noose, belt, cord, cable, hang, hanging, hanged, tie, ligature, cuerda, soga, nudo, cinturon, ahorcar*, colgar*, corde, noeud, ceinture, pendre, pendu, seil, schlinge, strick, gurtel, erhangen, erhange, aufhangen, knoten"},
	{"poison", "bleach, poison, antifreeze, chemicals, ammonia, rat poison, lejia, veneno, quimicos, amoniaco, javel, eau de javel, produits chimiques, bleiche, gift, chemikalien, mixed chemicals, mezcle, melange, mischte"},
	{"fumes", "gas, fumes, exhaust, carbon monoxide, charcoal, engine, engine running, hose, smoke, humo, escape, carbon, motor encendido, manguera, echappement, gaz, charbon, moteur, tuyau, abgase, auspuff, kohle, grillkohle, schlauch, rauch, gas on, gas oven, barbecue, bbq, grill, motor prendido, gaz ouvert, moteur allume, motor lauft, laufen lassen, angelassen, prendi el carro, encendi el coche, started the car, turned the car on, car on, demarre la voiture, auto angelassen, motor angelassen, car is running, car running, engine is running, motor is running, left the engine running, engine on, coche encendido, carro encendido, voiture allumee, auto lauft, motor an"},
	{"height", "bridge, roof, rooftop, ledge, edge, cliff, cliffs, balcony, tower, building, floor, overpass, window sill, railing, parking garage, car park, top, high, puente, azotea, tejado, cornisa, borde, acantilado, balcon, edificio, baranda, barandilla, piso, pont, toit, rebord, bord, falaise, immeuble, rambarde, etage, brucke, bruckengelander, dach, sims, rand, klippe, klippen, balkon, hochhaus, gelander, stock, stockwerk, jump out the window, out of the window, out the window, por la ventana, par la fenetre, aus dem fenster"},
	{"tracks", "tracks, train tracks, railway, railroad, rails, rail road, train, trains, platform, subway, traffic, highway, motorway, road, truck, lorry, oncoming, crash, vias, via del tren, tren, trenes, anden, metro, trafico, carretera, camion, autopista, rails, voie, voies, train, quai, tgv, circulation, route, autoroute, camion, gleis, gleise, zug, zuge, bahnsteig, ice, autobahn, strasse, verkehr, lkw"},
	{"water", "water, sea, lake, river, ocean, drown, drowning, waves, mar, rio, lago, agua, ahogarme, mer, lac, riviere, fleuve, noyer, noyade, meer, see, fluss, ertrinken, ertranken"},
	{"blood", "blood, bleeding, bleed, bled, wrist, wrists, vein, veins, artery, deep, stitches, sangre, sangrando, sangra, desangrarme, muneca, venas, profundo, sang, saigne, saigner, poignet, poignets, veines, profond, blut, blutet, bluten, verbluten, handgelenk, pulsader*, tief, blut*, sangr*, saign*, bleed*, blute, desangr*"},
	{"amount", "all, all of, whole, entire, everything, bunch, lot, lots, load, handful, bottle, pack, packet, box, stash, enough, supply, month of, todas, todos, todo, toda, entero, entera, frasco, caja, monton, bote, suficientes, tous, toutes, toute, tout, boite, plein, flacon, tas, assez, alle, alles, ganze, ganzen, packung, haufen, dose, viele, genug, vorrat, everywhere, por todas partes, partout, uberall, tanta, tanto, tellement, muchas, muchos, un monton, plein de, beaucoup, beaucoup de, lots of, a lot of, many, mucho, stark, a lot, heavily, much, every pill, every single pill, every tablet, every one of"},
	{"num", "0"},
	{"gather", "stockpil*, hoard*, saved up, saving up, saving, saved, collected, collecting, stash, hiding, hidden, hid, bought, buy, ordered, got, stole, kept, keeping, loaded, ready, prepared, set up, lined up, counted, juntando, guardado, guardando, guarde, escondi, escondidas, compre, comprado, consegui, robe, tengo, acumulo, accumule, mis de cote, de cote, garde, cache, caches, achete, commande, vole, prepare, sammle, gesammelt, gespart, aufgehoben, versteckt, gekauft, bestellt, besorgt, geklaut, bereit, aufgereiht"},
	{"rehearse", "practice, practiced, practised, practicing, rehearse, rehearsed, rehearsing, see how it felt, see how it feels, see what it feels, see if i could, to see, around my neck, practique, ensayar, ensaye, para ver, al cuello, entraine, repete, pour voir, autour de mon cou, geubt, uben, probiert, um zu sehen, um den hals"},
	{"took", "took, taken, take, taking, swallowed, swallow, downed, drank, drunk, injected, overdosed, od, od d, popped, tome, tomado, tomar, trague, tragado, bebi, me tome, inyecte, pris, prendre, avale, avaler, bu, injecte, genommen, nehme, nehmen, geschluckt, schlucke, getrunken, gespritzt, tomo, se tomo"},
	// ---- acts now, time ----
	{"now", "now, right now, rn, tonight, tn, today, currently, at the moment, this minute, this second, as we speak, already, just now, ago, an hour ago, minutes ago, kicking in, ahora, ahora mismo, esta noche, hoy, ya, en este momento, acabo de, hace una hora, maintenant, la maintenant, ce soir, cette nuit, aujourdhui, en ce moment, en train de, je viens de, viens de, il y a une heure, jetzt, gerade, heute, heute nacht, heute abend, eben, soeben, vor einer stunde, grad"},
	{"soon", "tomorrow, soon, weekend, this weekend, friday, saturday, sunday, monday, next week, tonight, before, after, when, once, date, anniversary, birthday, midnight, manana, pronto, fin de semana, finde, viernes, sabado, domingo, semana, cuando, antes, despues, demain, bientot, week end, vendredi, samedi, dimanche, semaine, quand, avant, apres, morgen, bald, wochenende, freitag, samstag, sonntag, woche, wenn, bevor, nach"},
	{"where", "here, there, at the, on the, in the, standing, sitting, lying, climbed, over the, aqui, estoy en, estoy, parado, sentado, sentada, acostado, ici, je suis sur, je suis au, je suis dans, debout, assis, assise, allonge, hier, ich bin auf, ich stehe, stehe, sitze, liege, on top, at the top, up on, up here, in the bathroom, en el bano, dans la salle de bain, im bad, im badezimmer"},
	// ---- farewells and putting affairs in order ----
	{"goodbye", "goodbye, goodbyes, bye, farewell, last message, last post, last time, last night, final message, note, letter, letters, suicide note, love you all, i am sorry, sorry for everything, forgive me, thank you for everything, adios, despedida, despedirme, me despedi, carta, cartas, nota, ultimo mensaje, los quiero, perdon, gracias por todo, adieu, au revoir, lettre, lettres, mot, dernier message, je vous aime, pardon, merci pour tout, abschied, abschiedsbrief, abschiedsnachricht, brief, briefe, zettel, letzte nachricht, lebt wohl, tschuss, verzeiht, danke fur alles, ich liebe euch"},
	{"giveaway", "giving away, give away, gave away, gave, giving, given, handing out, donate, donated, passwords, transferred, sold, regalando, regale, regalo, di, dado, repartiendo, transferi, contrasenas, donne, donner, donnee, distribue, vire, mots de passe, verschenke, verschenkt, geschenkt, gegeben, verteile, uberwiesen, passworter"},
	{"care", "look after, take care, taking care, care of, feed, feeding, rehome, rehomed, new home, guardian, testament, affairs, insurance, in order, instructions, debts, subscriptions, cuidar, cuide, cuidado, hogar, testamento, tutora, deudas, en orden, instrucciones, occuper, garder, garde, famille pour, testament, dettes, en ordre, consignes, kummern, kummert, sorgt, zuhause, testament, schulden, geregelt, anweisungen, my will, updated my will, testamento, mon testament, mein testament"},
	{"after", "after i am gone, when i am gone, when i am dead, after i die, will not need, will not be needing, not need them, not be here, not be around, not be alive, no longer, anymore, by the time, when i am not here, cuando me muera, cuando yo no este, ya no voy a, ya no los, ya no la, no voy a estar, quand je serai plus la, quand je serai mort, apres moi, en aurai plus besoin, aurai plus, serai plus, nicht mehr brauche, wenn ich tot bin, wenn ich nicht mehr da bin, nach mir, nicht mehr da, who gets, who will get, who will take, who will look after, quien se queda con, quien cuidara, qui gardera, qui aura, wer bekommt, nobody has to deal with, nobody has to, no one has to, nadie tenga que, personne ne ait a, niemand muss, in case something happens, in case anything happens, por si me pasa algo, por si acaso, au cas ou, au cas ou il me arrive, fur den fall, falls mir was passiert, falls mir etwas passiert, until someone finds me, until somebody finds me, so they will not find me, hasta que alguien me encuentre, en attendant que on me trouve, en attendant qu on me trouve, bis mich jemand findet"},
	// ---- danger from others ----
	{"hit", "hit, hits, hitting, beat, beats, beating, beaten, punch, punched, punching, kick, kicked, kicking, slap, slapped, choke, choked, choking, strangle, strangling, strangled, push, pushed, attack, attacked, attacking, assaulted, hurt, hurts, hurting, grabbed, threw, broke, bruises, pega, pego, pegando, golpea, golpeando, golpeo, pateo, ahorcando, ahorca, empujo, ataco, atacaron, lastima, lastimar, dano, moretones, frappe, frapper, frappee, bat, battu, coup, coups, etrangle, pousse, poussee, agresse, agressee, fait mal, bleus, schlagt, schlagen, geschlagen, schlug, tritt, wurgt, gewurgt, gestossen, runtergestossen, angegriffen, tut mir weh, blaue flecken, fait du mal, me fait du mal, me pega, me pegan, burns me, burned me, burnt me, me quema, me brule, verbrennt mich"},
	{"threat", "threaten, threatened, threatening, threats, said he would kill, going to kill me, will kill me, kill me, hurt me, coming over, coming for me, knows where i live, amenaza, amenazo, amenazando, me va a matar, me mata, menace, menacer, menacee, va me tuer, me tuera, me tue, droht, gedroht, bedroht, bringt mich um, bringt er mich um, shoot me, stab me, burn me, burn the house, with me in it, hurt my kids, hurt my children, hurt my family, hurt my mom, know where i live, me dispara, me disparo, dispararme, lastimar a mis hijos, hacerle dano a mis hijos, tirer dessus, me tirer dessus, tirerait dessus, du mal a mes enfants, faire du mal a, meinen kindern was an, tut meinen kindern, erschiesst mich, sticht mich, mir wehzutun, mir weh zu tun, tut mir was an, mir was antun, bringt er mich"},
	{"follow", "following, followed, follow, follows, stalking, stalker, stalked, behind me, circling, tailing, siguiendo, siguio, sigue, persigue, acosa, detras de mi, suit, suivie, suivi, suivre, poursuit, derriere moi, verfolgt, folgt, gefolgt, hinterher, hinter mir, siguiendome, persiguiendome, me persigue, laufen mir nach, lauft mir nach"},
	{"locked", "locked, lock, locked in, hiding, hide, closet, bathroom, trapped, will not let me leave, escondida, escondido, encerrada, encerrado, armario, cachee, cache, enfermee, enferme, placard, versteckt, verstecke, eingesperrt, eingeschlossen, schrank, enferm*, sperren, sperrt, einsperren, locks, locks me, me encierra, me enferme, sperrt mich"},
	{"touch", "touches, touch, touched, touching, does things, do things, secret, pictures, photos, private parts, in ways that are wrong, toca, tocar, me toca, secreto, fotos, me hace cosas, touche, toucher, me touche, me fait des choses, fasst mich an, anfassen, angefasst, geheimnis, macht sachen, sachen mit mir, sachen mit"},
	{"young", "years old, year old, i am 11, i am 12, i am 13, i am 14, i am 15, i am only, grade, school, anos, tengo once, tengo doce, ans, je ai douze, jahre alt, ich bin zwolf, ich bin elf, schule"},
	{"control", "will not let me, does not let me, controls, control, checks my phone, goes through my, tracks my, location, permission, isolates, isolate, jealous, allowed, forbids, no me deja, controla, revisa, me rastrea, permiso, celoso, celosa, interdit, empeche, controle, fouille, geolocalise, permission, jaloux, verbietet, kontrolliert, erlaubnis, eifersuchtig, lasst mich nicht"},
	// ---- elevated concerns ----
	{"eat", "eat, eaten, eating, ate, food, meal, meals, calories, calorie, fat, skinny, thin, weight, lose weight, purge, purging, throw up, vomit, laxatives, starve, starving, binge, binged, fasting, skip meals, comer, comido, comida, comidas, calorias, gorda, gordo, delgada, peso, adelgazar, vomito, vomitar, laxantes, atracones, hambre, manger, mange, repas, calories, grosse, gros, maigre, poids, maigrir, vomir, laxatifs, crises de boulimie, affame, essen, gegessen, mahlzeit*, kalorien, fett, dunn, gewicht, abnehmen, erbrechen, ubergebe, abfuhrmittel, hungere, fressattacken"},
	{"substance", "drink, drinking, drank, drunk, alcohol, booze, vodka, whiskey, beer, wine, bottle, high, drugs, coke, cocaine, heroin, meth, weed, using, relapsed, relapse, addicted, addiction, sober, blacked out, blackout, hungover, beber, bebo, borracho, borracha, alcohol, drogas, drogado, consumiendo, recai, adicto, adicta, boire, bois, bourre, ivre, alcool, drogue, defonce, rechute, accro, trinken, trinke, betrunken, alkohol, drogen, ruckfallig, suchtig, drauf"},
	{"grief", "passed, passed away, lost, loss, funeral, miss him, miss her, grief, grieving, without her, without him, anniversary, murio, fallecio, perdi, perdida, funeral, sin ella, sin el, extrano, mort, morte, decede, perdu, deuil, enterrement, sans elle, sans lui, gestorben, verstorben, verloren, verlust, beerdigung, ohne sie, ohne ihn, trauer"},
	{"past", "years ago, year ago, months ago, a while ago, long ago, last year, last summer, last winter, the year before, when i was, used to, in the past, in high school, in college, as a teen, as a teenager, as a kid, back then, survived, hace anos, hace un ano, hace dos anos, hace unos anos, hace un par de anos, hace meses, el ano pasado, cuando tenia, cuando era, en la prepa, sobrevivi, il y a deux ans, il y a un an, il y a des annees, il y a quelques annees, il y a longtemps, le annee derniere, quand je etais, au lycee, ado, survecu, vor jahren, vor einem jahr, vor zwei jahren, vor ein paar jahren, vor monaten, letztes jahr, als ich, als teenager, damals, fruher, uberlebt, schulzeit, in der schule"},
	{"attempt", "attempt, attempts, attempted, tried, try, trying, intento, intente, intentado, tentative, essaye, tente, versuch, versucht, suizidversuch"},
	{"neg", "not, never, no, nobody, nothing, none, nunca, jamas, nadie, nada, ni, pas, jamais, personne, rien, ne, nicht, nie, niemals, kein, keine, keinen, niemand, nichts"},
	{"recovery", "better now, doing better, much better, recovered, recovery, therapy, clean, sober, proud, doing well, happy now, in a better place, remission, volunteer, mejor, terapia, sobrio, orgullosa, orgulloso, mieux, therapie, sobre, fier, fiere, besser, gut jetzt, stolz, trocken, sin beber, keinen alkohol mehr, running again, vuelvo a correr, je recours, laufe wieder, doing much better, much better now"},
	// ---- ordinary contexts ----
	{"fiction", "book, novel, movie, film, show, series, episode, season, character, characters, game, story, chapter, villain, hero, heroine, play, opera, song, lyrics, poem, scene, plot, protagonist, detective, podcast, documentary, libro, novela, pelicula, peli, serie, capitulo, personaje, juego, historia, cancion, villano, heroe, obra, livre, roman, personnage, jeu, histoire, chanson, mechant, heros, piece, buch, folge, figur, spiel, geschichte, lied, bosewicht, held, is about a, trata de, parle de, handelt von"},
	{"news", "news, report, article, according, study, statistics, rate, rates, government, history, war, battle, century, died in, researchers, documentary, headline, noticias, informe, periodico, segun, estudio, tasa, gobierno, guerra, siglo, journal, infos, rapport, selon, etude, taux, gouvernement, guerre, siecle, nachrichten, bericht, zeitung, laut, studie, regierung, krieg, jahrhundert, police said, said police, police say, segun la policia, selon la police, laut polizei, epidemic, nationwide, across the country, many cities, in many cities, epidemia, epidemie, landesweit, prevention, awareness, suicide prevention, prevencion, prevention du suicide, suizidpravention, pravention"},
	{"code", "process, processes, server, thread, script, pid, container, instance, code, app, bug, linux, port, daemon, pod, cache, job, function, program, terminal, commit, deploy, database, query, build, proceso, servidor, hilo, programa, codigo, processus, serveur, programme, prozess, programm, skript, typing, keyboard, mouse, teclado, clavier, tastatur"},
	{"sport", "boss, level, match, team, goal, sniper, respawn, player, round, league, score, marathon, training, gym, ball, pitch, quest, partido, equipo, gol, nivel, jugador, entreno, maraton, gimnasio, jefe final, equipe, niveau, joueur, entraine, spiel, mannschaft, tor, endboss, spieler, trainiere, chess, cards, poker, board game, pool, trampoline, skydiving, bungee, parachute, diving, dive, high dive, ajedrez, cartas, piscina, echecs, piscine, schach, schwimmbad, sprungturm, un but, marque un but, range, shooting range, hunting, caza, chasse, jagd, salle de sport, salle de gym, football, soccer, basketball, tennis, rugby, hockey, baseball, futbol, baloncesto, foot, fussball, handball, volleyball, francotirador, tireur, scharfschutze"},
	{"cook", "chop, onion, onions, garlic, recipe, pan, dough, bake, baking, roast, chicken, potatoes, butter, toast, rice, boil, slice, kitchen, cebolla, ajo, sarten, masa, pollo, mantequilla, arroz, oignon, ail, four, poele, pate, poulet, pommes de terre, beurre, riz, zwiebel, knoblauch, pfanne, teig, hahnchen, kartoffeln, reis, crab, lobster, cooking, cook, cocinar, cocinando, cuisiner, cuisine, kochen, krabbe, hummer, homard, langosta, cutting board, sharpener, knife set, knife sharpener, tabla de cortar, planche a decouper, schneidebrett, messerschärfer, stove, on the stove, hob, kettle, bread, cheese, meat, vegetables, fruit, pain, fromage, brot, kase, fleisch, kuche, cocina"},
	{"work", "meeting, deadline, project, client, budget, slide, email, agenda, mute, roadmap, feature, ticket, quarter, boss, office, shift, reunion, proyecto, cliente, presupuesto, diapositiva, correo, oficina, turno, reunion, projet, client, budget, diapo, mail, bureau, meeting, projekt, kunde, budget, folie, mail, buro, schicht"},
	{"idiom", "dying to, dying of, die for, to die for, die laughing, died laughing, killing me, killing it, killed it, kill for, murder a, dead tired, dead serious, dead end, my phone died, battery died, dead battery, kill time, killing time, kill me now, me muero de, me muero por, me esta matando, mataria por, muerto de cansancio, muerta de cansancio, de muerte, je meurs de, meurs de envie, mort de rire, mort de fatigue, tuerais pour, une tuerie, sterbe vor, totgelacht, lach mich tot, todmude, tot mude, on edge, edge of my seat, jump at the chance, die of, die from, going to die of, about to die, muero de, meurs de, cut me some slack, cut some slack, cut down, cut down on, cut my hair, cut the, cut it out, cut to the chase, se me corto, se me corta, se me quemo, se me quema, se me murio, se me cayo, rather die than, would rather die, rather die, ca me tue, cette chaleur me tue, hit me up, it hit me, hit me like, stau bringt mich um, hitze bringt mich um, schuhe bringen mich um, me mata la curiosidad, drowning in, drowning in work, ahogado en trabajo, noye sous, ertrinke in arbeit, jump off a cliff for, would jump off a cliff, drown myself in, drowning myself in, me mato trabajando, me mato estudiando, me mato a trabajar, could sleep forever, sleep for days, cut myself some slack, some slack, laughed so hard, thought i would die, die my hair, dead curious, dead keen, dead set, mourir de rire, mourir de honte, morir de risa, morir de verguenza, vor lachen sterben, couper les cheveux, me couper les cheveux, cortarme el pelo, cortar el pelo, haare schneiden, heart attack, gave me a heart attack, me dio un infarto, un infarto, crise cardiaque, herzinfarkt, einen herzinfarkt"},
	{"question", "how, how many, how much, what, which, where, is it, can you, can i, quickest, fastest, easiest, best way, cuantas, cuantos, cuanto, como, cual, donde, combien, comment, quelle, quel, est ce que, wie, wie viele, wie viel, welche, welcher, wo, que pasa, que pasaria, que dosis, que cantidad, ou faut il, ou est ce que, was passiert, was ist, was mache, was kann, cuanta, what happens if, what would happen if, que pasa si, que pasaria si, qui se passe, que est ce qui se passe, was passiert wenn, altura, hauteur, con que, que pastillas, avec quoi, womit"},
	{"lethal", "lethal, fatal, deadly, kill someone, painless, quickest way, surest way, not wake up, stop my heart, bleed out, to die, letal, mortal, mortales, sin dolor, no despertar, mortel, mortelle, mortels, sans souffrir, ne plus se reveiller, todlich, schmerzlos, ohne schmerzen, nicht mehr aufzuwachen"},
	{"safe", "safe, safely, safest, safety, normal, maximum dose, per day, a day, doctor, prescribed, side effects, recommended, childproof, together, with food, miss a dose, seguro, segura, al dia, medico, recetado, efectos secundarios, juntos, securiser, securite, par jour, medecin, prescrit, effets secondaires, ensemble, sicher, am tag, pro tag, arzt, nebenwirkungen, zusammen, kindersicher, pharmacy, refill, refilled, pick up, farmacia, apotheke, ordonnance renouvelee, dosis normal, dosis maxima, blood test, blood work, analisis de sangre, prise de sang, bluttest, blutabnahme, start working, to start working, detector, alarm, smoke alarm, detector de, detecteur, melder, rauchmelder, is it okay, is it ok, is it safe, es normal, est ce normal, ist es normal"},
	{"laugh", "lol, lmao, haha, hahaha, jaja, jajaja, mdr, ptdr, xd, jk, just kidding, kidding, joking, joke, lel, hehe, jeje"},
	// ---- added for frames ----
	{"bignum", "ten, twelve, fifteen, twenty, thirty, forty, fifty, sixty, hundred, dozens, dozen, diez, doce, quince, veinte, treinta, cuarenta, cincuenta, cien, docenas, dix, douze, quinze, vingt, trente, quarante, cinquante, cent, zehn, zwolf, funfzehn, zwanzig, dreissig, vierzig, funfzig, hundert, dutzend, too many, too much, way too many, demasiadas, demasiado, trop, zu viele, zu viel, to many, to much, way to many, twentieth, thirtieth, tenth, fifteenth, vigesimo, decimo, vingtieme, dixieme, trentieme, zwanzigsten, zehnten, dreissigsten"},
	{"edge", "ledge, edge, railing, over the railing, sill, window sill, parapet, cornisa, borde, baranda, barandilla, rebord, bord, rambarde, sims, rand, gelander, bruckengelander, brustung, barrier, barrera, barriere, absperrung"},
	{"rail", "tracks, train tracks, railway, railway line, railroad, rails, rail road, vias, via del tren, vias del tren, gleis, gleise, gleisen, schienen, rails, voie ferree, voies"},
	{"infront", "in front of, middle of, middle of the road, into traffic, delante de, medio de, enfrente de, sous un train, sous le train, milieu de, vor einen zug, vor den zug, vor ein auto, mitten auf, devant un train, devant le train, devant une voiture, devant un camion"},
	{"enclosed", "sealed, taped, closed, shut, closed the windows, closed the door, windows shut, towels, inside it, in the car, cerre, cerrado, cerrada, selle, sellado, tapada, tapado, cinta, dentro del coche, ferme, fermee, calfeutre, bouchee, scotch, dans la voiture, zugemacht, abgedichtet, abgeklebt, geschlossen, im auto, garage, garaje, in my car, inside the car, ins auto, tent, tienda de campana, tente, zelt, inside, dentro, dedans, drinnen, tur zu, fenster zu, alles zu, into the car, en el coche"},
	{"benign", "fix, fixing, fixed, repair, repairing, watching, watch, view, sunset, sunrise, fireworks, hike, hiked, hiking, picnic, party, concert, visit, visiting, tourist, tour, cleaning, painting, install, installing, gutter, antenna, solar, swing, camping, climbing, selfie, stargazing, birthday, retirement, coworkers, colleagues, moving, wedding, vacation, holiday, trip, airport, canada, speech, cake, charity, allergic, neighbours, neighbors, decluttering, selling, arreglando, arreglar, reparar, viendo, fuegos, artificiales, atardecer, excursion, fiesta, cumpleanos, jubilacion, companeros, mudo, mudanza, boda, vacaciones, viaje, aeropuerto, pastel, alergico, columpio, reparer, regarder, feu, artifice, gouttiere, coucher de soleil, randonnee, fete, anniversaire, retraite, collegues, demenage, mariage, vacances, voyage, aeroport, gateau, allergique, balancoire, reparieren, repariere, schauen, feuerwerk, regenrinne, sonnenuntergang, aussicht, wanderung, geburtstag, ruhestand, kollegen, umziehe, umzug, hochzeit, urlaub, reise, flughafen, kuchen, allergisch, schaukel, taking photos, take pictures, taking pictures, take photos, sacando fotos, tomando fotos, prendre des photos, fotos machen, shaving, accidentally, by accident, sin querer, por accidente, par accident, sans faire expres, aus versehen, versehentlich, beim rasieren, afeitandome, en me rasant, thank you card, thank you cards, postcards, postales, cartes postales, postkarten, invitations, invitaciones, einladungen, minutes from, on my way, on the way, office, commute, traffic jam, a cinco minutos, de camino, a cinq minutes, du bureau, funf minuten, vom buro, dye my hair, my hair, mi pelo, mes cheveux, meine haare, tent, tarp, hammock, boat, sailing, clothesline, garden, drinks, having drinks, terrace, rooftop bar, tomando algo, un verre, boire un verre, was trinken, dachterrasse, meet, to meet, meet my, hang out, quedar, rejoindre, treffen, for a swim, go swimming, a dip, mountains, beach, montana, playa, montagne, plage, berge, strand, acampada, camper, zelten, camping trip, vet, veterinario, veterinaire, tierarzt, demenagement, demenager, cold, flu, headache, dentist, dress, robe, kleid, vestido, se marie, heiratet, se casa, jacket, shoes, my back hurts, me duele la espalda, mal au dos, rucken tut weh, tut der rucken weh"},
	{"social", "instagram, insta, twitter, tiktok, snapchat, facebook, youtube, twitch, online, account, follower, followers, app, red social, redes, compte, reseaux, konto, netz"},
	{"soft", "pillow, snowball, ball, balloon, cushion, toy, almohada, cojin, pelota, oreiller, coussin, ballon, kissen, ball, spielzeug, schneeball"},
	{"adult", "coach, teacher, neighbour, neighbor, priest, grown up, grownup, older guy, old man, man, stranger, entrenador, profesor, profe, maestro, vecino, cura, senor, hombre, desconocido, entraineur, prof, professeur, voisin, pretre, monsieur, homme, inconnu, trainer, lehrer, nachbar, pfarrer, mann, fremder, typ, guy"},
	{"farewell", "suicide note, goodbye note, goodbye letter, goodbye letters, goodbye message, goodbye text, goodbye post, farewell letter, last message, final message, last post, this is goodbye, goodbye everyone, goodbye forever, bye forever, love you all, i love you all, tell my family, tell my mom, tell my kids, forgive me, last time you will hear, carta de despedida, mensaje de despedida, nota de suicidio, carta de suicidio, esto es un adios, adios a todos, ultimo mensaje, diganle a mi, lettre de adieu, message de adieu, lettre de suicide, ce est un adieu, adieu tout le monde, dernier message, dites a ma, abschiedsbrief, abschiedsnachricht, abschiedsbriefe, das ist ein abschied, lebt wohl, letzte nachricht, sagt meiner, tschuss fur immer, message d adieu, saying goodbye to everyone, goodbye to everyone, despidiendo de todos, se esta despidiendo, dit au revoir a tout le monde, dire au revoir a tout le monde, von allen verabschiedet, verabschiedet sich, her last night, his last night, their last night, by the time you read this, when you read this, cuando leas esto, quand tu liras ca, wenn du das liest, my last night, mi ultima noche, ma derniere nuit, meine letzte nacht, my last day, last day alive, last time you hear from me, last you will hear from me, ultima vez que sabras de mi, derniere fois que tu as de mes nouvelles, letzte mal dass du von mir horst, deleted all my accounts, deleted my accounts, borre todas mis cuentas, borre mis cuentas, supprime tous mes comptes, supprime mes comptes, konten geloscht, alle konten geloscht, meine konten geloscht"},
	{"final", "forever, for good, for ever, one last time, last time, final, never again, permanently, for the last time, anymore, won t need, will not need, will not be needing, never see, para siempre, por ultima vez, nunca mas, ya no, pour toujours, une derniere fois, derniere fois, plus jamais, plus besoin, fur immer, ein letztes mal, letztes mal, nie wieder, nicht mehr brauche, do not need, not need, no need, no longer need, ya no necesito, no voy a necesitar, plus besoin, brauche nicht mehr, brauche sie nicht mehr"},
	{"selfkill", "kill myself, killing myself, kill my self, off myself, unalive myself, end my life, ending my life, take my life, take my own life, end my own life, end it all, ending it all, end everything, kill my shelf, kill my cell, kill my sell, hang myself, shoot myself, drown myself, stab myself, poison myself, matarme, me mato, me voy a matar, me quiero matar, me quiero mata, suicidarme, me suicido, me voy a suicidar, me quiero suicidar, quitarme la vida, me quite la vida, acabar con mi vida, acabar con todo, terminar con mi vida, terminar con todo, ahorcarme, colgarme, pegarme un tiro, me tuer, me suicider, me suicide, me foutre en le air, mettre fin a mes jours, mettre fin a ma vie, en finir, me pendre, me tirer une balle, me noyer, mich umbringen, mich umzubringen, bringe mich um, bring mich um, bring ich mich um, mich toten, mir das leben nehmen, mir das leben zu nehmen, nehme mir das leben, mich erhangen, mich erschiessen, erschiesse mich, erhange mich, mich vergiften, dem ganzen ein ende, meinem leben ein ende, bringe ich mich um, me voy a ahorcar, cortar las venas, cortarme las venas, me voy a pegar un tiro, me ouvrir les veines, me ahorco, me cuelgo, me pendrai, erhange ich mich, me mate, me matare, me tuerai, mit allem schluss, mit allem schluss machen, schneide mir die pulsadern, mir die pulsadern"},
	{"betterdead", "better off dead, rather be dead, better dead, wish i was dead, wish i were dead, want to be dead, mejor muerto, mejor muerta, estaria mejor muerto, estaria mejor muerta, preferiria estar muerto, preferiria estar muerta, ojala estuviera muerto, ojala estuviera muerta, mieux mort, mieux morte, prefererais etre mort, prefererais etre morte, aimerais etre mort, aimerais etre morte, lieber tot, besser tot, ware tot, ware lieber tot, wunschte ich ware tot, waiting to die, ready to die, esperando morir, esperando la muerte, attends de mourir, attends la mort, warte auf den tod, warte darauf zu sterben"},
	{"nowake", "not wake up, never wake up, do not wake up, not to wake up, sleep forever, sleep and never, no despertar, no me despierte, no despertara, nunca despertar, dormir para siempre, ne pas me reveiller, ne plus me reveiller, plus jamais me reveiller, dormir pour toujours, nicht aufwachen, nicht mehr aufwachen, nie wieder aufwachen, nicht mehr aufzuwachen, fur immer schlafen, never woke up, not woke up, never wake, no me despertaria, no despertaria, ne me reveillerais pas, nicht mehr aufwachen wurde"},
	{"overdosed", "overdosed, od, od d, odd, overdose, took an overdose, over dose, over dosed, sobredosis, me sobredosifique, fait une overdose, uberdosis, uberdosiert, over those, over doses"},
	{"neck", "neck, throat, cuello, garganta, cou, gorge, hals"},
	{"breakin", "breaking in, broke in, breaking into, broke into, in my house, in my flat, in my apartment, at my door, outside my door, banging on, kicking the door, entrando a mi casa, entrando en mi casa, en mi casa, en la puerta, entrer chez moi, chez moi, a ma porte, devant ma porte, bricht ein, einbricht, eingebrochen, in meiner wohnung, vor meiner tur, an der tur, bricht, einbrechen"},
	{"gettingin", "trying to get in, try to get in, getting in, get in, coming in, intenta entrar, quiere entrar, essaie de entrer, veut entrer, versucht reinzukommen, will rein"},
	{"outside", "outside, at the door, downstairs, coming over, on his way, on the way, coming here, waiting for me, afuera, fuera, en la puerta, viene para aca, viene, dehors, devant, arrive, en route, draussen, vor der tur, unterwegs, kommt, herkommt"},
	{"mundane", "grades, report card, late, homework, finds out, sees my, my room, bill, mess, forgot, scratch the car, broke the, phone bill, test results, notas, tarea, se entera, cuarto, notes, devoirs, apprend, chambre, noten, hausaufgaben, erfahrt, zimmer, zu spat, early, tarde, temprano, en retard, spat, alarm, despertador, reveil, wecker, laundry, ropa, linge, wasche, dishes, platos, vaisselle, abwasch, day off, dia libre, jour de repos, frei, tax, tax form, form, paperwork, printer, papeleo, paperasse, papierkram, drucker, imprimante, impresora, is due, report is due, deadline"},
	{"sent", "send, sent, sending, mandar, mande, mando, envie, enviar, envoyer, envoie, envoye, schicken, schicke, geschickt"},
	{"told", "told, tell, said, says, saying, texted, messaged, wrote, posted, called, dijo, dice, escribio, mando, publico, llamo, dit, ecrit, envoye, publie, appele, sagt, gesagt, schreibt, geschrieben, gepostet, angerufen, dicen, disent, sagen, said that"},
	{"perch", "bridge, roof, rooftop, cliff, cliffs, overpass, tower, top floor, top of the building, parking garage, car park, quarry, viaduct, window sill, puente, azotea, tejado, acantilado, viaducto, cantera, pont, toit, falaise, viaduc, carriere, brucke, dach, klippe, klippen, hochhaus, viadukt, steinbruch, top of, on top of, the top"},
	{"into", "into the, walk into, walking into, walked into, swim out, swimming out, entrando al, entrando en el, meterme en, me meto en, entrer dans, rentre dans, je rentre dans, ins meer, in den see, ins wasser, gehe ins, in den fluss"},
	{"way", "way, ways, method, methods, easiest, quickest, fastest, surest, best way, painless, forma, formas, manera, metodo, rapida, facon, moyen, moyens, methode, rapide, art, weg, wege, schnellste, schnelle, painlessly, quickly, quick, rapidas, rapides"},
	{"noose", "noose, nooses, slipknot, nudo corredizo, soga, noeud coulant, schlinge, strick"},
	{"athand", "ready, lined up, laid out, loaded, in my pocket, next to me, under my pillow, in my hand, on my desk, right here, tied, in front of me, on the table, listas, lista, preparada, preparadas, en la mesa, en mi mano, en fila, pretes, prete, alignes, sur mon bureau, dans ma main, sur la table, bereit, aufgereiht, geladen, neben mir, in meiner hand, auf dem tisch, fertig"},
	{"me", "me, myself, mich, mir, moi"},
	{"otherkill", "kill himself, kill herself, kill themselves, killing himself, killing herself, killing themselves, end his life, end her life, end their life, take his life, take her life, take their life, shoot himself, shoot herself, hang himself, hang herself, use it on herself, use it on himself, on herself, on himself, se va a matar, se quiere matar, matarse, suicidarse, se suicida, se va a suicidar, quitarse la vida, contra ella misma, contra el mismo, va se tuer, veut se tuer, se suicider, se tuer, contre elle, contre lui, bringt sich um, sich umbringen, sich umzubringen, sich das leben nehmen, erschiesst sich, sich erschiessen, sich damit, ending it, end it, going to end it, se va a pegar un tiro, pegarse un tiro, se va a disparar, se tirer une balle, va se tirer, bringt sich"},
	{"painful", "painful, less painful, hurt the least, doloroso, dolorosa, menos dolorosa, douloureux, douloureuse, moins douloureuse, schmerzhaft, schmerzlos, schmerzloseste"},
	{"toomuch", "everything, too many, too much, way too many, the whole bottle, the whole pack, the whole box, all of them, all of it, todo, todas, demasiadas, demasiado, todas las, tout, trop, tous, toutes, alles, zu viele, zu viel, alle, to many, to much, way to many, auf einmal, de golpe, de un golpe, de un coup, at once, all at once, them all, a lot more, more than i am supposed to, more than i should, more than prescribed, mas de lo que debia, mas de la cuenta, plus que prevu, plus que je devrais, mehr als ich sollte, mehr als erlaubt"},
	{"onpurpose", "on purpose, deliberately, intentionally, a proposito, adrede, queriendo, expres, volontairement, absichtlich, mit absicht"},
	{"kickin", "kicking in, kick in, taking effect, starting to work, hicieron efecto, hacen efecto, haciendo efecto, hace efecto, font effet, faire effet, commencent a agir, fangen an zu wirken, wirken, wirkt schon"},
	{"body", "arm, arms, wrist, wrists, leg, legs, thigh, thighs, skin, stomach, neck, brazo, brazos, muneca, munecas, pierna, piernas, muslo, piel, bras, poignet, poignets, jambe, jambes, cuisse, cuisses, peau, handgelenk, handgelenke, bein, beine, oberschenkel, haut"},
	{"harmdone", "stabbed myself, slit my wrists, slit my wrist, cut my wrists, cut my wrist, poured boiling water, burned myself, burnt myself, cut too deep, me corte las venas, me apunale, me queme, me corte muy profundo, me suis ouvert les veines, me suis poignarde, me suis brule, me suis coupe profond, pulsadern aufgeschnitten, mich erstochen, mich verbrannt, mich tief geschnitten"},
	{"headbang", "banging my head, bang my head, hitting my head, punching the wall, punching walls, golpeando la cabeza, golpeo la cabeza, me golpeo la cabeza, me tape la tete, frappe la tete, tete contre le mur, kopf gegen die wand, schlage meinen kopf"},
	{"cantstop", "can not stop, will not stop, does not stop, no puedo parar, no para, no se detiene, arrete pas, ne arrete pas, arrive pas a arreter, hort nicht auf, kann nicht aufhoren"},
	{"platform", "platform edge, edge of the platform, the express, express train, borde del anden, tren rapido, tren expreso, bord du quai, bahnsteigkante, durchfahrenden zug"},
	{"crash", "crash it, crash into, drive into, drive off, driving off, swerve, swerving, wrap my car, estrellarme, estrellar, chocar, me estrello, ecraser, foncer dans, encastrer, gegen einen baum, gegen die wand fahren, crashen, crash my car, crash the car, crash into a, crash into the"},
	{"breathe", "breathing, breathe, breathing in, inhaling, inhale, respirando, respiro, respirar, respire, respirer, atme, atmen, einatmen, eingeatmet"},
	{"balcony", "balcony, balcon, balkon, terrace, terraza, terrasse"},
	{"mybody", "my nose, my face, my eye, my ribs, my arm, my head, my jaw, my lip, my neck, mi cara, mi nariz, mi ojo, mi cabeza, mis costillas, ma tete, mon visage, mon nez, mon oeil, mes cotes, mein gesicht, meine nase, mein auge, meinen kopf, meine rippen"},
	{"victim", "being beaten, being hit, being attacked, being hurt, being followed, being stalked, been attacked, was attacked, got attacked, got jumped, got mugged, me atacaron, me estan pegando, me pegaron, me estan siguiendo, on me frappe, on me a agresse, on me a agressee, on me a frappe, on me a frappee, je me fais frapper, me suis fait agresser, me suis fait agressee, on me suit, ich werde geschlagen, wurde angegriffen, wurde geschlagen, werde verfolgt, werde geschlagen, angegriffen, uberfallen"},
	{"bruises", "bruises, bruised, bruise, moretones, morados, moreton, bleus, hematomes, blaue flecken, blauen flecken"},
	{"otherharm", "cutting herself, cutting himself, cut herself, cut himself, hurting herself, hurting himself, burning herself, se esta cortando, se corta, se corto, se lastima, se couper, se coupe, se scarifie, se fait du mal, ritzt sich, schneidet sich, verletzt sich"},
	{"unreachable", "not answering, will not answer, is not answering, not picking up, will not pick up, not replying, no contesta, no responde, no me contesta, repond pas, repond plus, ne repond pas, ne repond plus, geht nicht ran, nicht erreichbar, antwortet nicht, geht nicht ans telefon, nicht ans handy, no contesta el telefono, ne repond pas au telephone, not answering his phone, not answering her phone"},
	{"threatverb", "threaten, threatened, threatening, threats, threatens, amenaza, amenazo, amenazando, amenazas, menace, menacer, menacee, menaces, droht, gedroht, bedroht, drohung"},
	{"jump", "jump, jumping, jumped, jumps, springen, springt, springe, spring, saltar, salta, saltara, saltare, tirarse, se va a tirar, sauter, saute, va sauter, se jeter, se tirer, tirarme, me jeter, lanzarme, aventarme"},
	{"followme", "siguiendome, persiguiendome, me sigue, me siguio, me persigue, me suit, me suivait, me suivent, verfolgt mich, folgt mir, lauft mir nach, lauft mir hinterher, hinter mir her, lauft hinter mir, detras de mi, behind me, derriere moi, hinter mir"},
	{"resolve", "go through with it, going through with it, nothing will change my mind, do not try to stop me, nobody can stop me, no one can stop me, made up my mind, my mind is made up, at peace with it, at peace with my decision, decision is made, nadie me va a detener, nadie me detiene, nadie me va a parar, ya lo decidi, esta decidido, lo tengo decidido, nada me va a hacer cambiar, personne ne me arretera, personne ne va me arreter, ce est decide, ma decision est prise, rien ne me fera changer, niemand halt mich auf, es ist entschieden, ich habe mich entschieden, nichts halt mich, no matter what you say, digas lo que digas, quoi que tu dises, egal was du sagst"},
	{"knowhow", "know how, know exactly how, figured out how, worked out how, know when and how, se como, ya se como, se exactamente como, sais comment, sais exactement comment, weiss wie, weiss genau wie, know where and when, know when and where, se donde y cuando, sais ou et quand, weiss wo und wann, decided how and when, how and when"},
	{"use", "use, using, usar, utilizar, utiliser, benutzen, nehmen"},
	{"chose", "chose, picked, chosen, picked out, elegi, escogi, elegido, choisi, ausgesucht, gewahlt"},
	{"tall", "tallest, highest, how high, how tall, mas alto, mas alta, que altura, plus haut, plus haute, quelle hauteur, hochste, hochsten, wie hoch"},
	{"deathgood", "welcome death, death sounds, death would be, dying would be, relief to die, relief if i died, peaceful to die, death is peaceful, la muerte seria, morir seria, la muerte suena, la mort serait, mourir serait, sterben ware, der tod ware, tod klingt"},
	{"hopedie", "something kills me, get hit by a car, hit by a car, hit by a bus, hit by a truck, get cancer, god would take me, god takes me, god take me, dios me lleve, dios me llevara, que dios me lleve, dieu me prenne, dieu vienne me chercher, gott mich holt, gott holt mich, me renversait, me renverse, me atropella, me atropellara, me atropellase, uberfahrt, mich uberfahrt, a truck hit me, a car hit me, a bus hit me, truck hit me, car hit me, god to take me, que me lleve, dios que me lleve, que je parte, que je parte enfin, dass gott mich holt"},
	{"indifferent", "da igual, me da igual, me importa, egal, est egal, me est egal, do not care, dont care, ist mir egal, be fine if, would be fine if, would not mind if, me daria igual, ca me serait egal, me serait egal, ware mir egal"},
	{"notworth", "no vale la pena, not worth, ne vaut pas la peine, ne vaut rien, nicht wert, es nicht wert, no merece la pena"},
	{"neverborn", "never been born, never born, no haber nacido, nunca haber nacido, jamais ete ne, ne jamais etre ne, ne jamais etre nee, nie geboren"},
	{"wake", "wake, wake up, waking, woke, woke up, despertar, despierte, despertarme, despertara, reveiller, me reveiller, reveille, aufwachen, wache, wachen, aufwache"},
	{"relief", "relieved, relief, a relief, alivio, aliviada, aliviado, soulage, soulagee, soulagement, erleichtert, erleichterung, erlosung, soulag*, relie*"},
	{"everyone", "everyone, everybody, all of you, people i love, todos, a todos, todo el mundo, tout le monde, vous tous, alle, euch allen, allen, jeden"},
	{"wakeother", "wake up the, wake the, wake her, wake him, wake them, wake up my, despertar al, despertar a, reveiller le, reveiller la, reveiller les, wecke, aufwecken"},
	{"hidingplace", "hiding, hide, hid, closet, wardrobe, under the bed, locked myself in, locked in the bathroom, escondida, escondido, me escondi, estoy escondida, armario, cachee, cache, je me cache, placard, verstecke, versteckt, schrank, eingeschlossen, eingesperrt"},
	{"keepinghere", "only thing keeping me here, only thing keeping me alive, only reason i am still here, only reason i am still alive, lo unico que me mantiene aqui, lo unico que me mantiene vivo, lo unico que me mantiene viva, seule chose qui me retient, seule chose qui me garde en vie, einzige was mich noch halt, einzige was mich am leben halt"},
	{"research", "looked up, looking up, researched, researching, googled, googling, searching for, buscar formas, busque, he buscado, buscando como, cherche comment, je cherche, recherche, nachgelesen, nachzulesen, gegoogelt, recherchiert"},
	{"temporary", "for a while, for a weekend, for a bit, for a few days, for a week, for the weekend, into a good book, into a hammock, por un tiempo, un rato, unos dias, el fin de semana, pour quelques jours, un moment, le week end, fur ein paar tage, eine weile, ubers wochenende"},
	{"treat", "chocolate, sugar, candy, sweets, cake, pizza, coffee, caffeine, netflix, tv, chocolat, bonbons, schokolade, susses, dulces, cafe, kaffee"},
	{"routine", "every morning, every day, every night, every evening, daily, each morning, as prescribed, twice a day, once a day, todas las mananas, cada dia, cada manana, todos los dias, chaque matin, tous les jours, tous les soirs, jeden morgen, jeden tag, taglich, with dinner, with breakfast, with lunch, with a meal, con la cena, con la comida, avec le repas, au diner, zum essen, beim essen"},
	{"when", "date, the date, a date, fecha, la fecha, el dia, la date, le jour, datum, den tag, das datum"},
	{"notfor", "not for, no es para, pas pour, nicht fur, nicht zum"},
	{"love", "love you, love her, love him, love them, i love, los quiero, la quiero, lo quiero, te quiero, je vous aime, je le aime, je la aime, je te aime, ich liebe, hab euch lieb, hab dich lieb, liebe euch"},
	{"mild", "a bit, a little, bit, slightly, somewhat, un poco, algo, un peu, ein bisschen, etwas"},
}

// cset is a set of concepts, bit i for conceptTable[i].
type cset [csetWords]uint64

const csetWords = 3

func (c *cset) or(d cset) {
	for i := range c {
		c[i] |= d[i]
	}
}

func (c cset) has(i int) bool { return c[i>>6]&(1<<uint(i&63)) != 0 }

func (c cset) any(d cset) bool {
	for i := range c {
		if c[i]&d[i] != 0 {
			return true
		}
	}
	return false
}

func (c cset) empty() bool { return c == cset{} }

func (c *cset) add(i int) { c[i>>6] |= 1 << uint(i&63) }

// each calls f for every concept in c, in index order.
func (c cset) each(f func(i int)) {
	for w := range c {
		for v := c[w]; v != 0; v &= v - 1 {
			f(w<<6 + bits.TrailingZeros64(v))
		}
	}
}

// conceptIndex resolves words, phrases, prefixes and suffixes to concept
// sets. Built once from conceptTable. Lookups are by the token itself: its
// own concepts and the phrases that end in it come from one map entry;
// prefixes and suffixes are only tried when the token's first (last) three
// letters start (end) one.
type conceptIndex struct {
	names    []string
	byName   map[string]int
	words    map[string]*wordEntry
	prefixes map[string]cset
	suffixes map[string]cset
	stems    map[string]bool // first three letters of every prefix
	tails    map[string]bool // last three letters of every suffix
	affixLen []int           // distinct prefix/suffix lengths, ascending
	// concepts of numbers: any number, 10 and more, a year
	numID, bigID, pastID int
}

type wordEntry struct {
	c       cset          // the word's own concepts
	phrases []phraseEntry // phrases whose last word it is
}

type phraseEntry struct {
	before []string // the phrase's other words, in order
	c      cset
}

var concepts = buildConcepts()

func buildConcepts() *conceptIndex {
	ci := &conceptIndex{words: map[string]*wordEntry{}, prefixes: map[string]cset{}, suffixes: map[string]cset{},
		stems: map[string]bool{}, tails: map[string]bool{}, byName: map[string]int{}}
	if len(conceptTable) > 64*csetWords {
		panic("safety: too many concepts for cset") // a programming error caught by every test
	}
	entry := func(w string) *wordEntry {
		w = squashWord(w)
		e := ci.words[w]
		if e == nil {
			e = &wordEntry{}
			ci.words[w] = e
		}
		return e
	}
	lens := map[int]bool{}
	phraseIdx := map[string]int{} // "a b c" → index in its last word's list
	for i, c := range conceptTable {
		if _, dup := ci.byName[c.name]; dup {
			panic("safety: duplicate concept " + c.name)
		}
		ci.names = append(ci.names, c.name)
		ci.byName[c.name] = i
		var bit cset
		bit.add(i)
		for _, e := range strings.Split(c.entries, ",") {
			ws := strings.Fields(e)
			if len(ws) > 0 && !strings.ContainsAny(e, "*") && ws[0] != "0" {
				// Entries are read the way tokens are: "too many" is
				// "to many", "dont care" is "do not care".
				ws = normalize(strings.Join(ws, " "), nil)
			}
			switch {
			case len(ws) == 0:
			case len(ws) == 1 && strings.HasSuffix(ws[0], "*") && len(ws[0]) > 3:
				p := squashWord(strings.TrimSuffix(ws[0], "*"))
				ci.prefixes[p] = or(ci.prefixes[p], bit)
				ci.stems[p[:3]] = true
				lens[len(p)] = true
			case len(ws) == 1 && strings.HasPrefix(ws[0], "*") && len(ws[0]) > 3:
				p := squashWord(strings.TrimPrefix(ws[0], "*"))
				ci.suffixes[p] = or(ci.suffixes[p], bit)
				ci.tails[p[len(p)-3:]] = true
				lens[len(p)] = true
			case len(ws) == 1:
				en := entry(ws[0])
				en.c.or(bit)
			default:
				last := strings.TrimSuffix(ws[len(ws)-1], "*")
				key := strings.Join(ws, " ")
				en := entry(last)
				if k, ok := phraseIdx[key]; ok {
					en.phrases[k].c.or(bit)
					continue
				}
				phraseIdx[key] = len(en.phrases)
				before := make([]string, len(ws)-1)
				for k, w := range ws[:len(ws)-1] {
					before[k] = squashWord(w)
				}
				en.phrases = append(en.phrases, phraseEntry{before: before, c: bit})
			}
		}
	}
	for l := range lens {
		ci.affixLen = append(ci.affixLen, l)
	}
	for i := 1; i < len(ci.affixLen); i++ {
		for j := i; j > 0 && ci.affixLen[j] < ci.affixLen[j-1]; j-- {
			ci.affixLen[j], ci.affixLen[j-1] = ci.affixLen[j-1], ci.affixLen[j]
		}
	}
	ci.numID, ci.bigID, ci.pastID = ci.byName["num"], ci.byName["bignum"], ci.byName["past"]
	// ci.stems and ci.tails are keyed by squashed prefixes too.
	return ci
}

// tag writes the concept set of every token into sets (len(toks) long):
// the token's own concepts (a number is "num"), those of a prefix or suffix
// entry, and those of any phrase ending at it.
//
// toks must be squashed (see squash): the index is keyed that way.
func (ci *conceptIndex) tag(toks []string, sets []cset) {
	german := germanish(toks)
	for i, t := range toks {
		var b cset
		if e := ci.words[t]; e != nil {
			b = e.c
			for k := range e.phrases {
				if ph := &e.phrases[k]; endsWith(toks[:i], ph.before) {
					b.or(ph.c)
				}
			}
		}
		if german && t == "die" || !german && t == "tot" {
			b = cset{} // the German article; French "tôt" (early)
		}
		if isNumber(t) {
			b.add(ci.numID)
			if len(t) >= 2 {
				b.add(ci.bigID)
			}
			if len(t) == 4 && (t[:2] == "19" || t[:2] == "20") {
				b.add(ci.pastID) // a year
			}
		}
		if len(t) > 3 && ci.stems[t[:3]] {
			for _, l := range ci.affixLen {
				if l > len(t) {
					break
				}
				b.or(ci.prefixes[t[:l]])
			}
		}
		if len(t) > 3 && ci.tails[t[len(t)-3:]] {
			for _, l := range ci.affixLen {
				if l > len(t) {
					break
				}
				b.or(ci.suffixes[t[len(t)-l:]])
			}
		}
		sets[i] = b
	}
}

func endsWith(toks, words []string) bool {
	if len(words) > len(toks) {
		return false
	}
	off := len(toks) - len(words)
	for i, w := range words {
		if toks[off+i] != w {
			return false
		}
	}
	return true
}

func isNumber(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return t != ""
}

var germanWords = map[string]bool{
	"ich": true, "nicht": true, "der": true, "das": true, "und": true, "ist": true, "mich": true, "bin": true,
	"ein": true, "eine": true, "mein": true, "meine": true, "wie": true, "den": true, "dem": true, "wenn": true,
	"habe": true, "hab": true, "mit": true, "auf": true, "es": true, "sie": true, "er": true, "wir": true,
	"zu": true, "von": true, "mir": true, "sich": true, "auch": true, "noch": true, "schon": true, "nach": true,
	"kann": true, "will": true, "mache": true, "wo": true, "was": true, "damit": true, "dass": true,
	"mach": true, "aus": true, "bitte": true, "mal": true, "doch": true, "ja": true, "nein": true, "gut": true,
	"jetzt": true, "heute": true, "hier": true, "sind": true, "wird": true, "uns": true, "euch": true,
}

var englishWords = map[string]bool{
	"i": true, "the": true, "to": true, "and": true, "is": true, "you": true, "it": true, "am": true,
	"want": true, "of": true, "my": true, "me": true, "a": true, "in": true, "just": true, "will": true,
	"going": true, "would": true, "not": true, "do": true, "that": true, "this": true, "so": true,
}

// germanish reports more German than English function words: "die" is
// then the article.
func germanish(toks []string) bool {
	de, en := 0, 0
	for _, t := range toks {
		if germanWords[t] {
			de++
		}
		if englishWords[t] {
			en++
		}
	}
	return de > en
}
