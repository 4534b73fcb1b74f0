"""The demo's planted regression: one engine starts citing dead pages far more often.

From the last observation date on (when the corpus has at least two), ``ENGINE`` replaces a
share of its web citations by a page of the same topic that is dead from the start (plan
``dead``: 404/410 in every crawl), where the topic has one: on the same query panel, its
dead-citation rate rises from about 8% to about 20%, what ``comparisons`` must find
(``vs_previous_date``) and the demo codebooks' alert rule must fire on. ``NULL_PAIR`` are two
engines whose citations are generated alike, with no plant: the alert rule watching their
difference must stay silent. Draws come from a generator of their own, so every other answer
and every other engine is exactly as without the plant.
"""

from __future__ import annotations

from functools import lru_cache

from citeaudit.demo_corpus.world import World, rng_for, web_source

ENGINE = "perplexity"
NULL_PAIR = ("copilot", "google_ai_overview")
# share of the engine's citations, in topics with a dead page, replaced by one
SHARE = 0.45


def active(world: World, engine: str, day: int) -> bool:
    """Whether ``engine``'s answers of observation day ``day`` carry the regression."""
    return engine == ENGINE and world.days >= 2 and day >= world.days - 1


@lru_cache(maxsize=4096)
def dead_pages(world: World, topic: int) -> tuple[int, ...]:
    """The sources of a topic that are dead from the first crawl on."""
    s = world.scale.web_per_topic
    return tuple(g for g in range(topic * s, (topic + 1) * s)
                 if web_source(world, g).plan == "dead")


def substitute(world: World, engine: str, day: int, topic: int, g: int, used: set[int],
               *key: object) -> int:
    """The source cited in place of ``g`` (``g`` itself unless the regression replaces it);
    ``key`` identifies the citation (day, slot, attempt, claim, position)."""
    if not active(world, engine, day):
        return g
    choices = [d for d in dead_pages(world, topic) if d not in used]
    rng = rng_for(world.seed, "regression", *key)
    if not choices or rng.random() >= SHARE:
        return g
    return choices[rng.randrange(len(choices))]
