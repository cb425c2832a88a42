"""A seeded tool-catalog generator with intent-style queries and gold tools.

Tools spread over the 17 domains of the OpenPawz Librarian Method. Many capabilities
exist in several domains ("send a message" in email, messaging and communication;
"list files" in filesystem, storage and github), so names and descriptions are near
duplicates across domains. Large catalogs add integration tools for generated
services. A query paraphrases the gold tool's capability with synonyms and names the
context the way an agent would after reading the user's request.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["DOMAINS", "ToolCase", "ToolSpec", "generate_tool_catalog"]

DOMAINS = [
    "system",
    "filesystem",
    "web",
    "identity",
    "memory",
    "agents",
    "communication",
    "squads",
    "tasks",
    "skills",
    "dashboard",
    "storage",
    "email",
    "messaging",
    "github",
    "integrations",
    "trading",
]

# verb: (description verb, synonyms used in queries)
VERBS: dict[str, tuple[str, list[str]]] = {
    "send": ("Send", ["deliver", "dispatch", "transmit"]),
    "read": ("Read", ["fetch", "open up", "look at"]),
    "list": ("List", ["enumerate", "show all", "get an overview of"]),
    "create": ("Create", ["make a new", "set up a new", "add a new"]),
    "delete": ("Delete", ["remove", "get rid of", "erase"]),
    "update": ("Update", ["change", "modify", "edit"]),
    "search": ("Search", ["find", "look up", "query"]),
    "archive": ("Archive", ["put away", "file away", "stash"]),
    "schedule": ("Schedule", ["plan", "book a time for", "queue up"]),
    "export": ("Export", ["download", "dump", "extract"]),
}
# domain: [(object, qualifier for descriptions, context words an agent would use)]
OBJECTS: dict[str, list[tuple[str, str, str]]] = {
    "system": [
        ("process", "running operating-system process", "on this machine"),
        ("service", "background system service", "on the server"),
        ("log", "system log entry", "in the system logs"),
    ],
    "filesystem": [
        ("file", "file on the local disk", "on disk"),
        ("folder", "directory on the local disk", "in the local folders"),
    ],
    "web": [
        ("page", "web page by URL", "on the internet"),
        ("bookmark", "saved browser bookmark", "in my browser"),
    ],
    "identity": [
        ("user", "user account", "for a user account"),
        ("token", "API access token", "for authentication"),
    ],
    "memory": [
        ("note", "long-term memory note", "in your memory"),
        ("fact", "remembered fact about the user", "that you remember"),
    ],
    "agents": [
        ("agent", "sub-agent definition", "for a helper agent"),
        ("run", "agent run", "of an agent"),
    ],
    "communication": [
        ("message", "message through the unified inbox", "across channels"),
        ("contact", "address book contact", "in my contacts"),
    ],
    "squads": [
        ("squad", "team of agents", "for the agent team"),
        ("member", "squad member", "in the squad"),
    ],
    "tasks": [
        ("task", "to-do task", "on my to-do list"),
        ("reminder", "reminder", "as a reminder"),
    ],
    "skills": [
        ("skill", "installed skill plugin", "among the skills"),
        ("recipe", "skill recipe", "for a skill"),
    ],
    "dashboard": [
        ("widget", "dashboard widget", "on the dashboard"),
        ("chart", "dashboard chart", "in a chart"),
    ],
    "storage": [
        ("object", "object in cloud storage", "in the cloud bucket"),
        ("bucket", "cloud storage bucket", "in cloud storage"),
    ],
    "email": [
        ("email", "email message", "by email"),
        ("attachment", "email attachment", "from an email"),
    ],
    "messaging": [
        ("message", "chat message on Slack or Telegram", "on Slack"),
        ("channel", "chat channel", "in a chat channel"),
    ],
    "github": [
        ("issue", "GitHub issue", "in the repository"),
        ("file", "file in a GitHub repository", "in the GitHub repo"),
        ("pull_request", "GitHub pull request", "as a pull request"),
    ],
    "integrations": [
        ("workflow", "automation workflow", "as an automation"),
        ("webhook", "incoming webhook", "through a webhook"),
    ],
    "trading": [
        ("order", "exchange trading order", "on the exchange"),
        ("position", "open trading position", "in my portfolio"),
    ],
}
SERVICES_A = [
    "sales",
    "help",
    "pay",
    "ship",
    "form",
    "time",
    "doc",
    "lead",
    "task",
    "chat",
    "data",
    "cloud",
    "mail",
    "sign",
    "book",
    "track",
    "stock",
    "survey",
    "event",
    "ticket",
]
SERVICES_B = [
    "force",
    "desk",
    "flow",
    "hub",
    "ly",
    "base",
    "grid",
    "stack",
    "point",
    "works",
    "spot",
    "link",
    "wave",
    "nest",
    "forge",
    "pilot",
    "sync",
    "cast",
    "bird",
    "path",
]
INTEGRATION_OBJECTS = [
    "record",
    "invoice",
    "customer",
    "ticket",
    "report",
    "deal",
    "shipment",
    "form_response",
    "document",
    "subscriber",
]
OPENERS = ["I need to", "Help me", "The user wants to", "Please", "I want to", "Next step:"]


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
