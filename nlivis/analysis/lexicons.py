"""Small word lists for edits and probes where WordNet is poor: mutually exclusive categories, numbers,
given names by gender, gendered word pairs, quantifiers, and the vocabulary of the probe templates.

Written for nlivis (not taken from CheckList or any published suite). A category is *exclusive* when one
thing, read as the same thing in premise and hypothesis, cannot be two of its members at once: a shirt
that is red is not blue (for a single-coloured reading), a dog is not a cat, a violin is not a guitar.
Members that overlap are left out on purpose (no "football" beside "soccer", no "grey" beside
"silver", no "taxi" beside "car", no "orange" among fruits since it is also a colour).
"""
from __future__ import annotations

EXCLUSIVE_CATEGORIES: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    # name: (members, spaCy coarse parts of speech they are replaced as)
    "colour": (("red", "blue", "green", "yellow", "black", "white", "purple", "pink", "brown"),
               frozenset({"ADJ"})),
    "nationality": (("American", "French", "German", "Chinese", "Japanese", "Italian", "Spanish", "Mexican",
                     "Russian", "Brazilian", "Korean", "Canadian", "Swedish", "Greek", "Indian", "Pakistani", "British",
                     "Australian", "Egyptian", "Turkish"), frozenset({"ADJ", "PROPN"})),
    "material": (("wooden", "metal", "plastic", "glass", "stone", "leather", "paper", "cotton", "wool"),
                 frozenset({"ADJ", "NOUN"})),
    "animal": (("dog", "cat", "horse", "cow", "sheep", "goat", "pig", "bird", "duck", "chicken", "rabbit",
                "camel", "elephant", "lion"), frozenset({"NOUN"})),
    "instrument": (("guitar", "violin", "piano", "drum", "trumpet", "flute", "cello", "saxophone", "harp",
                    "accordion", "banjo", "clarinet"), frozenset({"NOUN"})),
    "sport": (("soccer", "basketball", "baseball", "tennis", "volleyball", "hockey", "golf", "rugby", "cricket"),
              frozenset({"NOUN"})),
    "vehicle": (("bicycle", "motorcycle", "bus", "truck", "train", "boat", "airplane", "tractor", "helicopter"),
                frozenset({"NOUN"})),
    "drink": (("coffee", "tea", "milk", "beer", "wine", "juice", "soda"), frozenset({"NOUN"})),
    "fruit": (("apple", "banana", "grape", "lemon", "peach", "pear", "cherry", "strawberry", "watermelon"),
              frozenset({"NOUN"})),
    "weekday": (("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
                frozenset({"PROPN", "NOUN"})),
    "season": (("spring", "summer", "autumn", "winter"), frozenset({"NOUN"})),
    "daytime": (("morning", "afternoon", "evening", "night"), frozenset({"NOUN"})),
    "room": (("kitchen", "bedroom", "bathroom", "garage", "basement", "attic"), frozenset({"NOUN"})),
}
"""Exclusive co-hyponyms by category: a member is replaced by the next member of its list (cyclically)."""

NUMBER_WORDS: tuple[str, ...] = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                                 "eleven", "twelve")
"""Counts from two up: a change keeps the noun plural. "one" and "a" are left alone (the noun would change)."""

MALE_NAMES: tuple[str, ...] = (
    "James", "John", "Robert", "Michael", "David", "William", "Richard", "Joseph", "Thomas", "Charles",
    "Daniel", "Matthew", "Anthony", "Mark", "Paul", "Steven", "Andrew", "Kevin", "Brian", "George",
    "Edward", "Peter", "Frank", "Henry", "Samuel", "Patrick", "Jack", "Adam", "Carlos", "Ahmed",
    "Hiroshi", "Ivan", "Luis", "Omar", "Raj", "Wei",
)
FEMALE_NAMES: tuple[str, ...] = (
    "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Susan", "Jessica", "Sarah", "Karen", "Nancy",
    "Lisa", "Emily", "Michelle", "Laura", "Anna", "Rachel", "Julia", "Emma", "Olivia", "Sophia",
    "Grace", "Helen", "Alice", "Claire", "Hannah", "Kate", "Maria", "Fatima", "Yuki", "Elena",
    "Lucia", "Aisha", "Priya", "Mei", "Sofia", "Nina",
)
"""Given names whose gender is clear in English; names that are also common words (Rose, May, Will, Bill,
Mark is kept as it is rarely a noun in captions) are avoided."""

GENDER_PAIRS: tuple[tuple[str, str], ...] = (
    ("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"), ("gentleman", "lady"),
    ("gentlemen", "ladies"), ("father", "mother"), ("fathers", "mothers"), ("son", "daughter"),
    ("sons", "daughters"), ("brother", "sister"), ("brothers", "sisters"), ("husband", "wife"),
    ("husbands", "wives"), ("uncle", "aunt"), ("uncles", "aunts"), ("nephew", "niece"), ("king", "queen"),
    ("prince", "princess"), ("grandfather", "grandmother"), ("grandpa", "grandma"), ("dad", "mom"),
    ("boyfriend", "girlfriend"), ("groom", "bride"), ("male", "female"), ("males", "females"),
    ("he", "she"), ("himself", "herself"), ("mr.", "mrs."), ("mr", "mrs"),
)
"""Gendered words and their counterparts, swapped both ways. his/him/her are decided by part of speech
(her → his as a determiner, him as an object); "guy" is left out (plural "guys" is used for any group)."""

MASS_NOUNS: frozenset[str] = frozenset({
    "equipment", "clothing", "apparel", "attire", "headgear", "footwear", "furniture", "gear", "luggage",
    "baggage", "jewelry", "jewellery", "cutlery", "tableware", "crockery", "machinery", "hardware", "software",
    "sustenance", "nutriment", "food", "transport", "transportation", "housing", "merchandise", "laughter",
    "music", "information", "advice", "news", "traffic", "weather", "water", "milk", "rice", "sand", "snow",
    "grass", "money", "produce", "poultry", "livestock", "seafood", "meat", "bread", "cheese", "garbage",
    "trash", "rubbish", "litter", "mail", "scenery", "wildlife", "foliage", "vegetation", "stationery", "hair",
    # material nouns in -ing that WordNet files beside the thing made of them (fence / fencing, floor / flooring)
    "fencing", "flooring", "tubing", "piping", "netting", "siding", "bedding", "paneling", "panelling", "shelving",
    "wiring", "seating", "planking", "decking", "roofing", "padding", "frosting", "icing", "stuffing", "lettering",
    "plumbing", "scaffolding", "lighting",
})
"""Nouns used only as mass nouns in captions: never replacing a counted noun ("holding an equipment", "two
clothings", "laughters", "a fencing" for "a fence"). Written for nlivis; WordNet does not mark countability."""

SINGULAR_QUANTIFIERS: tuple[str, ...] = ("a", "every", "no")
PLURAL_QUANTIFIERS: tuple[str, ...] = ("some", "all", "no", "most")
QUANTIFIER_STRENGTH: dict[str, int] = {"every": 3, "all": 3, "each": 3, "most": 2, "a": 1, "an": 1, "some": 1}
"""Positive quantifiers ordered by strength over the same noun and predicate, with existential import:
every/all ⊨ most ⊨ some/a. "no" is exclusive with each of them."""

# ---------------------------------------------------------------- probe templates (NLI and paraphrase)

OCCUPATIONS: tuple[str, ...] = (
    "doctor", "teacher", "lawyer", "farmer", "nurse", "chef", "pilot", "artist", "student", "soldier",
    "baker", "dancer", "writer", "singer", "engineer", "waiter", "painter", "scientist", "banker", "athlete",
)
ACTIVITIES: tuple[tuple[str, str], ...] = (
    # (progressive, simple past)
    ("sleeping", "slept"), ("running", "ran"), ("eating", "ate"), ("swimming", "swam"), ("singing", "sang"),
    ("dancing", "danced"), ("reading", "read"), ("cooking", "cooked"), ("laughing", "laughed"),
    ("walking", "walked"), ("smiling", "smiled"), ("writing", "wrote"), ("painting", "painted"),
    ("working", "worked"), ("waiting", "waited"), ("shouting", "shouted"), ("sitting", "sat"),
    ("jumping", "jumped"), ("crying", "cried"), ("driving", "drove"),
)
TRANSITIVE_VERBS: tuple[tuple[str, str, str], ...] = (
    # (base, past, past participle) of asymmetric verbs whose object is a person: no symmetric verb ("meet":
    # the nurse met the writer ⊨ the writer met the nurse), whose role swap the templates would call neutral
    ("help", "helped", "helped"), ("call", "called", "called"), ("see", "saw", "seen"),
    ("hug", "hugged", "hugged"), ("follow", "followed", "followed"), ("visit", "visited", "visited"),
    ("thank", "thanked", "thanked"), ("push", "pushed", "pushed"), ("pay", "paid", "paid"),
    ("hire", "hired", "hired"), ("teach", "taught", "taught"),
    ("warn", "warned", "warned"), ("trust", "trusted", "trusted"), ("admire", "admired", "admired"),
    ("watch", "watched", "watched"), ("hit", "hit", "hit"), ("invite", "invited", "invited"),
    ("interview", "interviewed", "interviewed"), ("recognize", "recognized", "recognized"),
)
PERSON_ADJECTIVES: tuple[str, ...] = (
    "tall", "happy", "young", "strong", "rich", "busy", "early", "late", "asleep", "awake", "sad", "quiet",
    "fast", "wet", "dry", "healthy", "honest", "polite", "careful",
)
OBJECT_ADJECTIVES: tuple[str, ...] = (
    "open", "full", "heavy", "clean", "new", "long", "wide", "deep", "thick", "dark", "hot", "light", "hard",
    "empty", "narrow", "cheap", "soft", "dirty", "cold", "old",
)
"""Adjectives for people and for things; each is paired with its WordNet 3.0 antonym (the engine's
`wordnet_replacements`: the adjective's dominant first sense and a direct antonym) when a probe is built, and
one without a clear antonym there is dropped. "loud" is not among them: WordNet's antonym is "soft" (of a sound),
which a loud person is not the opposite of."""
OBJECTS: tuple[str, ...] = ("box", "bag", "bottle", "jar", "basket", "drawer", "cup", "room", "pot", "bucket")
COMPARATIVES: tuple[tuple[str, str], ...] = (
    ("taller", "shorter"), ("older", "younger"), ("stronger", "weaker"), ("richer", "poorer"),
    ("faster", "slower"), ("heavier", "lighter"), ("louder", "quieter"), ("happier", "sadder"),
    ("bigger", "smaller"),
)
"""Comparative adjectives and their converse: "A is taller than B" ⊨ "B is shorter than A". Each says something
of a person ("earlier than" is left out: a person is not earlier than another)."""
HOLDABLE_HYPONYMS: tuple[str, ...] = (
    "puppy", "kitten", "daisy", "parrot", "sparrow", "pigeon", "hamster", "rabbit", "lamb", "apple", "lemon",
    "pear", "shirt", "jacket", "coat", "sweater", "bucket", "cup", "bottle", "jar", "basket", "box", "bag",
    "screwdriver", "axe", "shovel", "rifle", "pistol", "sword", "doll",
)
"""Countable nouns a person can hold or carry, whose WordNet hypernym (nearest unambiguous one, looked up when
the probe is built) is a true "is a" and a countable noun (puppy → dog, shirt → garment, bag → container).
Left out because WordNet's hypernym is not an everyday one or not countable: spoon → container, candle →
lamp, rose → bush, camera → equipment, hat → clothing, sandwich → sustenance, novel → fiction, baby →
offspring."""
HYPERNYMS_BY_HAND: tuple[tuple[str, str, str], ...] = (
    # (hyponym, its hypernym, a frame whose {} takes either with its article)
    ("puppy", "dog", "is holding {}"), ("kitten", "cat", "is holding {}"), ("rose", "flower", "is holding {}"),
    ("tulip", "flower", "is holding {}"), ("hammer", "tool", "is holding {}"), ("sneaker", "shoe", "is holding {}"),
    ("apple", "fruit", "is eating {}"), ("banana", "fruit", "is eating {}"), ("carrot", "vegetable", "is eating {}"),
    ("violin", "instrument", "is carrying {}"), ("guitar", "instrument", "is carrying {}"),
    ("truck", "vehicle", "is driving {}"), ("sedan", "car", "is driving {}"), ("novel", "book", "is reading {}"),
    ("trout", "fish", "is catching {}"), ("sparrow", "bird", "is feeding {}"), ("oak", "tree", "is standing under {}"),
)
"""Hyponym / hypernym pairs written by hand for the independent monotonicity probes (`analysis.probes`), not looked
up in WordNet as `--augment`'s hypernym and hyponym edits are: everyday "is a" pairs, each with a frame in which
both words are countable and natural ("is driving a sedan" ⊨ "is driving a car"). Every frame starts with "is ",
which the probes negate as "is not "."""
ANIMAL_HYPERNYMS_BY_HAND: tuple[tuple[str, str], ...] = (
    ("puppy", "dog"), ("kitten", "cat"), ("sparrow", "bird"), ("lamb", "sheep"), ("dog", "animal"),
)
"""Hand-written hyponym / hypernym pairs of animals, for the subject of "every" and "no" (each noun's singular
takes "is")."""
EXCLUSIVE_BY_HAND: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (what the words are, a frame whose {} takes one of them, the words: any two exclude each other there; one
    # word each, so that a swap changes one word and no article)
    ("body of water", "is swimming in a {}", ("lake", "river", "pool", "pond")),
    ("city", "is walking through {}", ("Paris", "Tokyo", "London", "Rome", "Cairo", "Sydney")),
    ("seat", "is sitting on a {}", ("chair", "bench", "stool")),
    ("finishing place", "finished the race in {} place", ("first", "second", "third")),
    ("table shape", "is sitting at a {} table", ("round", "square")),
)
"""Mutually exclusive words written by hand for the independent word-swap probe (`analysis.probe_templates`), in
categories none of `EXCLUSIVE_CATEGORIES` (the edit engine's, and so `--augment`'s) holds: one place, seat or rank
at a time, read of one person at one moment as SNLI's annotators read a pair, so any two contradict. Not here, as the
audit found (`nlivis/data/audit/probes.jsonl`): "last" place, which may be the third, and buildings, which nest (a
school's library)."""
SYNONYMS_BY_HAND: tuple[tuple[str, str, str], ...] = (
    # (word, a word for the same thing, a frame whose {} takes either)
    ("a couch", "a sofa", "is sitting on {}"), ("a bike", "a bicycle", "is riding {}"),
    ("a cab", "a taxi", "is getting out of {}"), ("a photo", "a picture", "is taking {}"),
    ("a shop", "a store", "is walking into {}"), ("a gift", "a present", "is wrapping {}"),
    ("a bucket", "a pail", "is carrying {}"), ("the phone", "the telephone", "is talking on {}"),
    ("big", "large", "is carrying a {} box"), ("the trash", "the garbage", "is taking out {}"),
)
"""Words for the same thing in a frame, written by hand for the independent word-swap probe: a one-word swap that
keeps the meaning, so either sentence entails the other (the label-preserving edits the issue-29 shortcut, "one
changed word → contradiction", gets wrong)."""
PEOPLE_BY_HAND: tuple[str, ...] = (
    "man", "woman", "boy", "girl", "child", "kid", "toddler", "baby", "adult", "grownup", "lady", "gentleman", "guy",
    "teenager", "farmer", "snowboarder", "skier", "surfer", "skateboarder", "cyclist", "musician", "singer", "dancer",
    "drummer", "guitarist", "wrestler", "boxer", "swimmer", "runner")
"""Lemmas of words for people that a caption always means a person by (for `CAPTION_IS_A_BY_HAND`)."""
CAPTION_IS_A_BY_HAND: dict[str, tuple[str, ...]] = {
    # hypernym (its lemma; spaCy's lemma of "people" is "people"): the lemmas of hyponyms a caption means it of
    "person": PEOPLE_BY_HAND, "people": PEOPLE_BY_HAND,
    "grownup": ("man", "woman", "lady", "gentleman"), "adult": ("man", "woman", "lady", "gentleman"),
    "child": ("boy", "girl", "toddler", "baby"), "woman": ("lady", "wife", "mother", "bride"),
    "man": ("gentleman", "guy", "husband", "father", "groom"), "musician": ("guitarist", "drummer", "pianist",
                                                                          "violinist", "singer"),
    "fighter": ("wrestler", "boxer"),
    "animal": ("cat", "horse", "cow", "sheep", "goat", "pig", "camel", "elephant", "bird", "duck", "chicken"),
    "dog": ("poodle", "terrier", "retriever", "collie", "dachshund", "bulldog", "beagle", "labrador"),
    "bird": ("pigeon", "duck", "seagull", "gull", "parrot", "goose", "eagle", "swan"),
    "garment": ("shirt", "jacket", "coat", "dress", "sweater", "scarf", "suit", "uniform", "skirt", "costume", "vest",
                "robe"),
    "coat": ("jacket", "parka"), "boat": ("canoe", "kayak", "sailboat", "raft", "yacht", "rowboat"),
    "vehicle": ("car", "bus", "motorcycle", "bicycle", "bike", "van", "tractor", "scooter"),
    "car": ("jeep", "taxi", "cab", "convertible", "limousine"),
    "instrument": ("drum", "piano", "trumpet", "saxophone", "flute", "cello", "accordion", "banjo", "harp",
                   "clarinet", "trombone", "microscope", "telescope"),
    "container": ("bag", "box", "basket", "bucket", "bottle", "jar"), "bag": ("backpack", "purse", "handbag"),
    "building": ("house", "church", "barn", "skyscraper", "cathedral"), "store": ("deli", "bakery", "supermarket"),
    "fruit": ("orange", "grape", "pear", "watermelon", "strawberry", "peach", "cherry"),
    "tool": ("shovel", "rake", "wrench", "drill", "axe"), "weapon": ("gun", "rifle", "pistol", "sword", "spear"),
    "gun": ("rifle", "pistol"), "hair": ("beard", "mustache", "moustache"), "shelter": ("tent", "hut"),
    "entrance": ("doorway",),
}
"""Hypernym → hyponyms of things captions show, written by hand: the "is a" pairs a caption means whatever sense
WordNet files the words under (a *microscope* is an instrument, a *weapon* is not one a musician plays). The
negated copy's entailments take a hypernym or hyponym only from here (`self_pairs.hand_written_is_a`): WordNet's
relations there were right 95.6% of the time, below the audit's floor, on senses no caption means
(*instruments* → *weapons*, *fisherman* → *worker*, *clothing* → *commodity*). Kept disjoint from the independent
probes' pairs (`HYPERNYMS_BY_HAND`, `ANIMAL_HYPERNYMS_BY_HAND`), so the monotonicity probes do not test pairs
augmentation trains on under a negation (`tests/test_augment.py`)."""
OUTDOOR_PLACES: tuple[str, ...] = ("park", "garden", "yard", "field")
"""Where the animals of `ANIMAL_HYPERNYMS_BY_HAND` are said to be."""
ROUTINE_EVENTS: tuple[tuple[str, str, str], ...] = (
    # (past tense phrase, gerund phrase, noun-phrase of the event) for temporal order templates
    ("ate breakfast", "eating breakfast", "breakfast"), ("went to work", "going to work", "work"),
    ("called a friend", "calling a friend", "the call"), ("read the news", "reading the news", "the news"),
    ("took a shower", "taking a shower", "the shower"), ("walked the dog", "walking the dog", "the walk"),
    ("cleaned the kitchen", "cleaning the kitchen", "the cleaning"), ("paid the bills", "paying the bills",
                                                                      "the payment"),
    ("watched a movie", "watching a movie", "the movie"), ("fixed the car", "fixing the car", "the repair"),
)
PLACES: tuple[str, ...] = ("park", "library", "station", "market", "museum", "beach", "garden", "school",
                           "office", "hospital")
