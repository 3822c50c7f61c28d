"""The words ``scenes`` reads with: who a statement is about, and what one subject cannot do, be
or be in at the same time.

General English, hand-made and small (no package on the registries ships WordNet's antonyms for
offline use): bodily states that exclude each other (sitting / standing / running / sleeping),
being asleep against waking activities, indoors against outdoors, and the families of nouns that
name people and animals. Each list is a string of words (bars part the alternatives of a
class); ``scenes`` stems them as ``reading`` stems a text, so every inflection a stem covers
counts.
"""

from __future__ import annotations

# Nouns that name a subject, by family. Two subjects align when they share a family, or when one
# is a person of any kind and the other names people in general.
SUBJECTS: dict[str, str] = {
    "male": "man men boy boys guy guys gentleman gentlemen male father dad son husband brother "
    "grandfather grandpa uncle king",
    "female": "woman women girl girls lady ladies female mother mom mum daughter wife sister "
    "grandmother grandma aunt queen",
    "people": "person people someone somebody child children kid kids baby babies toddler "
    "toddlers crowd group couple family adult adults teenager teenagers teen teens individual "
    "worker workers player players customer customers vendor vendors musician musicians "
    "guitarist singer singers dancer dancers performer performers athlete athletes runner "
    "runners cyclist cyclists biker bikers skier skiers surfer surfers swimmer swimmers "
    "pedestrian pedestrians tourist tourists student students soldier soldiers officer officers "
    "doctor doctors nurse nurses chef chefs artist artists",
    "dog": "dog dogs puppy puppies",
    "cat": "cat cats kitten kittens",
    "horse": "horse horses pony",
    "bird": "bird birds",
}

# Words for several of a kind: "a group of men" is about men.
COLLECTIVES = frozenset(["group", "crowd", "couple", "family", "pair"])

# Words that make a statement a habit, a taste, a plan or an ability rather than what is
# happening: "the kids like swimming" and "the kids like reading" are both true, and so are
# "he runs every morning" and "he swims on Sundays". Such statements are never read as scenes.
NOT_A_SCENE = (
    "every usually always often sometimes never daily weekly monthly weekends each like "
    "likes liked love loves loved enjoy enjoys enjoyed prefer prefers preferred want wants "
    "wanted can could will would should may might must plan plans planning hope hopes used"
)

# Families that are people: each aligns with ``people``.
PERSONS = frozenset(["male", "female", "people"])

# What one body does at a time: the words of one class exclude each other, except those between
# the same bars (forms and near-synonyms of one state). Sleeping is not here (one sleeps lying
# or sitting), nor swimming (one jumps into the water to swim): ASLEEP and MOVING place them.
BODY_STATES: tuple[str, ...] = (
    "sit sits sitting seated | stand stands standing | lie lies lying lay lays laying | kneel "
    "kneels kneeling | run runs running jog jogs jogging | walk walks walking | jump jumps "
    "jumping leap leaps leaping midair | dance dances dancing",
    # Keeping still against moving at all.
    "still motionless wait waits waiting | move moves moving run runs running walk walks "
    "walking jump jumps jumping dance dances dancing",
    # A game is not played sitting or lying down.
    "sit sits sitting seated lie lies lying lay lays laying | basketball soccer football tennis "
    "volleyball hockey rugby",
)

# Ways of getting somewhere, and pursuits that take one's hands and attention: one at a time.
MOVING = (
    "walk walks walking | run runs running jog jogging | swim swims swimming | drive drives "
    "driving | ride rides riding bike bikes biking bicycle cycle cycles cycling | climb climbs "
    "climbing | lie lies lying lay lays laying | sail sails sailing | "
    "ski skis skiing | skate skates skating skateboard skateboarding | surf surfs surfing"
)
PURSUITS = (
    "read reads reading | write writes writing | cook cooks cooking grill grills grilling | eat "
    "eats eating | sleep sleeps sleeping asleep | swim swims swimming | drive drives driving | "
    "paint paints painting | "
    "sing sings singing | climb climbs climbing | fish fishes fishing | shop shops shopping | "
    "sew sews sewing knit knits knitting | type types typing | sail sails sailing"
)
ACTIVITIES: tuple[str, ...] = (MOVING, PURSUITS)

# Being asleep excludes every waking activity.
ASLEEP = "sleep sleeps sleeping asleep nap naps napping"
AWAKE = (
    "read reads reading write writes writing eat eats eating drink drinks drinking play plays "
    "playing talk talks talking sing sings singing cook cooks cooking work works working watch "
    "watches watching run runs running walk walks walking jump jumps jumping swim swims swimming "
    "dance dances dancing drive drives driving ride rides riding climb climbs climbing laugh "
    "laughs laughing shout shouts shouting paint paints painting throw throws throwing kick kicks "
    "kicking leap leaps leaping look looks looking watch watches watching stare stares staring "
    "gaze gazes gazing wave waves waving operate operates operating build builds building "
    "repair repairs repairing fix fixes fixing cheer cheers cheering speak speaks speaking "
    "perform performs performing shave shaves shaving sail sails sailing hug hugs hugging kiss "
    "kisses kissing pose poses posing smile smiles smiling chat chats chatting yell yells yelling "
    "clap claps clapping carry carries carrying push pushes pushing pull pulls pulling lift "
    "lifts lifting dig digs digging paddle paddles paddling skate skates skating ski skis skiing "
    "surf surfs surfing bowl bowls bowling"
)
# Games one plays awake (and so not asleep).
SPORTS = "basketball soccer football tennis baseball golf volleyball hockey rugby"

# Colours: one thing is not two of them ("a red cap" then "a blue cap").
COLOURS = (
    "red orange yellow green blue purple pink brown black white gray grey blond blonde "
    "brunette redheaded"
)

# Ages and sizes: one thing is not both ("a young man" then "an elderly man").
AGES = {"young": "young", "little": "young", "old": "old", "elderly": "old", "older": "old"}
SIZES = {
    "small": "small", "little": "small", "tiny": "small",
    "big": "big", "large": "big", "huge": "big", "giant": "big",
}  # fmt: skip

# Places that exclude each other: inside a building against out in the open, and a few kinds of
# open land that one scene is not in at once.
INDOORS = (
    "indoors indoor inside kitchen bedroom bathroom office classroom library restaurant shower "
    "bed bathtub church gym hospital museum theater theatre mall cafe salon barn garage "
    "room hallway lobby hotel couch sofa"
)
OUTDOORS = (
    "outdoors outdoor outside beach street road sidewalk park field forest woods mountain desert "
    "ocean sea lake river yard garden trail countryside boat moon sand grass snow sky hillside "
    "playground waterfall shallows waves"
)
TERRAINS: tuple[str, ...] = (
    "beach | desert | forest woods jungle | moon",
    "ocean sea | lake | river stream | pool",
    # Games, instruments, meals and vehicles: playing one, eating one, riding in one.
    "basketball | soccer football | tennis | baseball | golf | volleyball | hockey | rugby | "
    "cricket | chess",
    "guitar | piano | drums drum bongos | violin | flute | horn trumpet | saxophone | cello",
    "breakfast | lunch | dinner",
    "bus | car | truck | train | plane airplane | motorcycle motorcycles motorbike motorbikes",
    "kitchen | bedroom | bathroom bathtub shower | barn | garage | classroom | library | church "
    "| hospital | gym | salon",
    # Animals: one is not another.
    "dog dogs puppy | cat cats kitten | horse horses pony | bull bulls cow cows | sheep | camel "
    "camels | elephant elephants | bird birds",
    # Alone, or with others.
    "alone lone solo | crowd group together friend friends team couple several many others",
)
