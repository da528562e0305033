"""Documents for the ARES step tests: one good page and ways of spoiling it."""

from __future__ import annotations

from papergym.recipes.ares.documents import Document

GOOD = """Managing high blood pressure at home

High blood pressure often causes no symptoms, so many people learn about it only at a routine check.
Doctors usually confirm the diagnosis with several readings taken on different days, because a single reading can be misleading.
A home monitor with an upper-arm cuff gives more reliable readings than a wrist device for most adults.
Readings should be taken after five minutes of quiet rest, with the back supported and the arm at heart level.
Reducing salt, staying active and limiting alcohol can lower blood pressure by several points within weeks.
Many patients still need medication, and the dose is adjusted by the doctor according to the home readings.
People taking these medicines should not stop them suddenly, since blood pressure can rise again quickly.
Severe headache, chest pain or sudden weakness with a very high reading needs emergency care at once.

Keeping a simple diary of readings and bringing it to each appointment helps the doctor judge whether the treatment is working.
Family members can help by learning how to use the monitor and by recognising the warning signs that need urgent help.
"""


def document(text: str = GOOD, doc_id: str = "doc-1") -> Document:
    return Document(id=doc_id, text=text, source="corpus.jsonl")


SWITCH = """Replacing a wall light switch

Replacing a worn light switch is a common electrical job, but it is only safe when the circuit is dead.
The first step is to switch off the circuit at the consumer unit and label it so nobody turns it back on.
A voltage tester should then confirm that no current reaches the switch before any screw is loosened.
The old switch is unscrewed from the wall box and the position of each wire is noted or photographed.
The new switch must be rated for the load of the lights and suit the type of circuit in the building.
Each conductor goes into the matching terminal, and the earth wire is connected to the earth terminal of the box.
Terminal screws are tightened firmly, because a loose connection can overheat and start a fire.
After the faceplate is fixed, power is restored and the switch is tested several times.

Local regulations may require that electrical work in kitchens, bathrooms or new construction is done or inspected by a qualified electrician.
Anyone unsure about the wiring, or who finds aluminium conductors or scorch marks, should stop and call a professional.
"""


# Scientific prose written for these tests, a paragraph a string; the tests wrap it at a width.
SCIENCE = (
    "Soil moisture controls how much of the rain that falls on a catchment becomes runoff, and "
    "it is therefore one of the main sources of uncertainty in flood forecasts. Field probes "
    "measure it precisely but only at a few points, while satellite retrievals cover whole "
    "regions at a resolution of tens of kilometres and miss the variation within a hillslope. "
    "In this study we combine the two sources of information in a data assimilation scheme that "
    "updates the state of a distributed hydrological model every time a new observation "
    "arrives, weighting each observation by an error estimate that depends on the vegetation "
    "cover and on the depth of the measurement.",
    "We evaluate the scheme on three catchments in the upper Danube basin over the years 2012 "
    "to 2019, holding out the last two years for testing. Compared with the model run without "
    "assimilation, the updated model reduces the error of the peak discharge by about a fifth "
    "on average, and the improvement is largest after long dry spells, when the initial soil "
    "moisture is most uncertain. The gain is smaller in the catchment with the densest forest, "
    "where the satellite signal is attenuated by the canopy and the error model gives the "
    "retrievals little weight, so that the probes carry most of the correction.",
    "These results suggest that the value of satellite soil moisture for flood forecasting "
    "depends less on the resolution of the product than on a realistic description of its "
    "errors, and that a small number of well placed probes can make up for much of what the "
    "retrievals miss under dense vegetation.",
)


def wrapped(paragraphs: tuple[str, ...], width: int, prefix: str = "") -> str:
    """The paragraphs hard-wrapped at ``width`` characters, a blank line between them."""
    import textwrap

    return "\n\n".join(
        textwrap.fill(p, width, initial_indent=prefix, subsequent_indent=prefix) for p in paragraphs
    )
