"""A seeded tool-catalog generator with intent-style queries and gold tools.

Tools spread over the 17 domains of the OpenPawz Librarian Method. Many capabilities
exist in several domains ("send a message" in email, messaging and communication;
"list files" in filesystem, storage and github), so names and descriptions are near
duplicates across domains. Large catalogs add integration tools for generated
services. A query paraphrases the gold tool's capability with synonyms and names the
context the way an agent would after reading the user's request. The word lists are
``librarian_bench/data/tools.json``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from librarian_bench.datasets._files import data_json

__all__ = ["DOMAINS", "ToolCase", "ToolSpec", "generate_tool_catalog"]

_DATA = data_json("tools.json")

DOMAINS: list[str] = _DATA["domains"]

# verb: (description verb, synonyms used in queries)
VERBS: dict[str, tuple[str, list[str]]] = {
    verb: (described, synonyms) for verb, (described, synonyms) in _DATA["verbs"].items()
}
# domain: [(object, qualifier for descriptions, context words an agent would use)]
OBJECTS: dict[str, list[tuple[str, str, str]]] = {
    domain: [(obj, qualifier, context) for obj, qualifier, context in rows]
    for domain, rows in _DATA["objects"].items()
}
SERVICES_A: list[str] = _DATA["services_a"]
SERVICES_B: list[str] = _DATA["services_b"]
INTEGRATION_OBJECTS: list[str] = _DATA["integration_objects"]
OPENERS: list[str] = _DATA["openers"]


@dataclass
class ToolSpec:
    """A generated tool: name, description, domain, argument names."""

    name: str
    description: str
    domain: str
    arguments: list[str]

    def schema(self) -> dict[str, object]:
        """An OpenAI-style function schema (used to count schema tokens)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {
                        a: {"type": "string", "description": f"The {a.replace('_', ' ')}."}
                        for a in self.arguments
                    },
                    "required": self.arguments[:1],
                },
            },
        }


@dataclass
class ToolCase:
    """A query and the tool that answers it."""

    query: str
    gold: str
    domain: str


def _base_tools() -> list[tuple[ToolSpec, tuple[str, str, str, str]]]:
    out = []
    for domain in DOMAINS:
        for obj, qualifier, context in OBJECTS[domain]:
            for verb, (word, _) in VERBS.items():
                name = f"{domain}_{verb}_{obj}"
                description = f"{word} a {qualifier}."
                args = (
                    [f"{obj}_id", "query"]
                    if verb in {"search", "list"}
                    else [f"{obj}_id", "details"]
                )
                out.append(
                    (ToolSpec(name, description, domain, args), (verb, obj, qualifier, context))
                )
    return out


def _service_tools(rng: random.Random, n: int) -> list[tuple[ToolSpec, tuple[str, str, str, str]]]:
    out: list[tuple[ToolSpec, tuple[str, str, str, str]]] = []
    services = [a + b for a in SERVICES_A for b in SERVICES_B]
    rng.shuffle(services)
    i = 0
    while len(out) < n:
        service = services[i % len(services)] + (
            "" if i < len(services) else str(i // len(services))
        )
        i += 1
        for obj in rng.sample(INTEGRATION_OBJECTS, 4):
            for verb in rng.sample(list(VERBS), 3):
                word = VERBS[verb][0]
                readable = obj.replace("_", " ")
                name = f"{service}_{verb}_{obj}"
                description = f"{word} a {readable} in {service.capitalize()}."
                context = f"in {service.capitalize()}"
                out.append(
                    (
                        ToolSpec(name, description, "integrations", [f"{obj}_id", "details"]),
                        (verb, obj, f"{readable} in {service}", context),
                    )
                )
                if len(out) >= n:
                    break
            if len(out) >= n:
                break
    return out


def generate_tool_catalog(
    n_tools: int = 500, n_queries: int = 150, seed: int = 5
) -> tuple[list[ToolSpec], list[ToolCase]]:
    """A catalog of about ``n_tools`` tools and ``n_queries`` intent queries with gold tools.

    The 17 domains' own tools (about 370) come first; larger catalogs add integration
    tools for generated services. Deterministic for a given seed.
    """
    rng = random.Random(seed)
    base = _base_tools()
    if n_tools < len(base):
        base = rng.sample(base, n_tools)
    pairs = base + _service_tools(rng, max(0, n_tools - len(base)))
    cases: list[ToolCase] = []
    for _ in range(n_queries):
        spec, (verb, _obj, qualifier, context) = rng.choice(pairs)
        synonym = rng.choice(VERBS[verb][1])
        thing = qualifier.replace("_", " ")
        # Agents restate the need in their own words, with the context they read.
        article = "" if synonym.endswith("new") else "the "
        query = f"{rng.choice(OPENERS)} {synonym} {article}{thing.split(' in ')[0]} {context}"
        cases.append(ToolCase(query, spec.name, spec.domain))
    return [p[0] for p in pairs], cases
