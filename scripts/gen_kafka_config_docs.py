"""Writes src/zkcontroller/broker/kafka_config_docs.py: the documentation string of every config Kafka's
``KafkaConfig`` and ``LogConfig`` define, as DescribeConfigs (v3+, ``include_documentation``) sends it.

Run once against a Kafka checkout: ``python scripts/gen_kafka_config_docs.py <kafka repo> 2.8.2 > <module>``.
Each ``define``/``defineInternal`` call of the two ConfigDefs gives a key and its doc argument; the doc's constant
is evaluated from the sources at that tag (string literals, ``+``, ``s"..."`` interpolation, constants of this and
the named Java classes). The few that call Java or Scala methods are spelled out in `COMPUTED`, and
``ZkSslClientEnableDoc``'s sorted list of ZooKeeper TLS keys is built in `Sources.evaluate`.
"""

from __future__ import annotations

import re
import subprocess
import sys

SCALA = {"KafkaConfig": "core/src/main/scala/kafka/server/KafkaConfig.scala",
         "LogConfig": "core/src/main/scala/kafka/log/LogConfig.scala"}
JAVA = {name: f"clients/src/main/java/org/apache/kafka/{path}.java" for name, path in {
    "TopicConfig": "common/config/TopicConfig", "SslConfigs": "common/config/SslConfigs",
    "SaslConfigs": "common/config/SaslConfigs", "SecurityConfig": "common/config/SecurityConfig",
    "CommonClientConfigs": "clients/CommonClientConfigs",
    "BrokerSecurityConfigs": "common/config/internals/BrokerSecurityConfigs"}.items()}
JAVA["RaftConfig"] = "raft/src/main/java/org/apache/kafka/raft/RaftConfig.java"
CONSTANTS = {"ZKClientConfig.SECURE_CLIENT": "zookeeper.client.secure",
             "ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET": "zookeeper.clientCnxnSocket"}
"""ZooKeeper's constants (not in Kafka's repository)."""
SECURITY_PROTOCOLS = "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"  # SecurityProtocol.names(), in declaration order
COMPUTED = {
    '${SecurityProtocol.names.asScala.mkString(", ")}': SECURITY_PROTOCOLS,  # within s"..."
    'Utils.join(SecurityProtocol.names(), ", ")': f'"{SECURITY_PROTOCOLS}"',
    "${classOf[Authorizer].getName}": "org.apache.kafka.server.authorizer.Authorizer",
}
"""Source text calling Java or Scala methods, and the source text it is replaced with before evaluation."""

TOKEN = re.compile(r'''(?P<space>\s+|//[^\n]*|/\*.*?\*/)|(?P<raw>"""(?:.|\n)*?"""(?!"))|(?P<str>"(?:[^"\\\n]|\\.)*")
    |(?P<sraw>s"""(?:.|\n)*?"""(?!"))|(?P<sstr>s"(?:[^"\\\n]|\\.)*")|(?P<num>\d+[LlDd]?)
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|(?P<op>->|[-+(),;=:{}\[\]*/.<>!&|])''',
                   re.VERBOSE | re.DOTALL)
SCALA_END = re.compile(r"\n\s*(?:val |var |def |private|lazy |object |class |@|\}|/\*|//|\n)")
"""Where a Scala constant's expression ends: the next line starting a definition, a comment or a blank line."""
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "r": "\r"}


def unescape(text: str) -> str:
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", lambda m: chr(int(m[1][1:], 16)) if m[1][0] == "u" and len(m[1]) == 5
                  else ESCAPES[m[1]], text)


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot read {text[pos:pos + 60]!r}")
        pos = m.end()
        if m.lastgroup != "space":
            out.append((m.lastgroup or "", m.group()))
    return out


class Sources:
    """The constants (``val X =`` in Scala, ``static final`` in Java) of each class, evaluated on demand."""

    def __init__(self, repo: str, tag: str) -> None:
        self.text = {cls: subprocess.run(["git", "-C", repo, "show", f"{tag}:{path}"], check=True, capture_output=True,
                                         text=True).stdout for cls, path in {**SCALA, **JAVA}.items()}
        self.cache: dict[str, object] = dict(CONSTANTS)

    def expression(self, cls: str, name: str) -> str:
        text = self.text[cls]
        if cls in SCALA:
            pattern = re.compile(rf"^\s*(?:private(?:\[\w+\])?\s+)?va[lr] {name}(?:\s*:\s*[\w\[\], ]+)?\s*=", re.M)
            m = pattern.search(text, text.index(f"\nobject {cls} "))  # not a same-named val of object Defaults
            assert m is not None, f"{cls}.{name} not found"
            end = SCALA_END.search(text, m.end())
            return text[m.end():end.start() if end else len(text)]
        m = re.search(rf"\bstatic final \w+ {name}\s*=", text)
        assert m is not None, f"{cls}.{name} not found"
        return text[m.end():text.index(";\n", m.end())]  # no doc string here holds ";\n"

    def value(self, cls: str, ref: str) -> object:
        if ref in self.cache:  # CONSTANTS
            return self.cache[ref]
        parts = ref.split(".")
        owner, name = (parts[0], parts[1]) if len(parts) == 2 and parts[0] in self.text else (cls, ref)
        key = f"{owner}.{name}"
        if key not in self.cache:
            expr = self.expression(owner, name)
            self.cache[key] = self.evaluate(owner, expr)
        return self.cache[key]

    def evaluate(self, cls: str, expr: str) -> object:
        for source, replacement in COMPUTED.items():
            expr = expr.replace(source, replacement)
        if "ZkSslConfigToSystemPropertyMap.keys" in expr:
            names = self.value(cls, "ZkSslConfigToSystemPropertyMap")
            assert isinstance(names, dict)
            skip = {self.value(cls, "ZkSslClientEnableProp"), self.value(cls, "ZkClientCnxnSocketProp")}
            listed = "</code>, <code>".join(sorted(k for k in names if k not in skip))
            expr = re.sub(r"ZkSslConfigToSystemPropertyMap\.keys\.toList\.sorted\.filter\(.*?\)\.mkString\(.*?\"\)$",
                          lambda _: f'"<code>{listed}</code>"', expr.strip(), flags=re.S)
        toks = tokens(expr)
        if toks[-1] == ("op", "+"):  # cut short (a comment or blank line inside it)
            raise ValueError(f"{cls}: an expression ends in '+': {expr[-80:]!r}")
        return self.parse(cls, toks)

    def parse(self, cls: str, toks: list[tuple[str, str]]) -> object:
        """``term (+ term)*``; a term is a literal, a constant, ``Map(k -> v, ...)`` or ``<map>(key)``."""
        if toks[0] == ("name", "Map") and toks[1] == ("op", "("):
            pairs = split_args(toks[2:-1])
            return {self.parse(cls, p[:p.index(("op", "->"))]): self.parse(cls, p[p.index(("op", "->")) + 1:])
                    for p in pairs}
        out: list[str] = []
        i = 0
        while i < len(toks):
            kind, text = toks[i]
            if kind == "str":
                out.append(unescape(text[1:-1]))
            elif kind == "raw":
                out.append(text[3:-3])
            elif kind in ("sstr", "sraw"):
                body = text[4:-3] if kind == "sraw" else text[2:-1]
                out.append(self.interpolate(cls, body))
            elif kind == "num":
                out.append(text.rstrip("LlDd"))
            elif kind == "name" and i + 1 < len(toks) and toks[i + 1] == ("op", "("):
                close = matching(toks, i + 1)
                table = self.value(cls, text)
                assert isinstance(table, dict), text
                out.append(table[self.parse(cls, toks[i + 2:close])])
                i = close
            elif kind == "name":
                out.append(str(self.value(cls, text)))
            elif (kind, text) not in (("op", "+"), ("op", ";")):
                raise ValueError(f"{cls}: cannot evaluate {text!r} in {' '.join(t for _, t in toks)[:200]}")
            i += 1
        return "".join(out)

    def interpolate(self, cls: str, body: str) -> str:
        def one(m: re.Match[str]) -> str:
            return str(self.parse(cls, tokens(m[1]))) if m[1] is not None else str(self.value(cls, m[2]))
        parts = re.split(r"(\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)", body)
        return "".join(one(re.fullmatch(r"\$\{(.*)\}|\$(\w+)", p, re.S)) if p.startswith("$")  # type: ignore[arg-type]
                       else unescape(p) for p in parts)


def matching(toks: list[tuple[str, str]], open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(toks)):
        depth += {"(": 1, ")": -1}.get(toks[i][1], 0) if toks[i][0] == "op" else 0
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses")


def split_args(toks: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    args: list[list[tuple[str, str]]] = [[]]
    depth = 0
    for tok in toks:
        if tok[0] == "op" and tok[1] in "([{":
            depth += 1
        elif tok[0] == "op" and tok[1] in ")]}":
            depth -= 1
        if tok == ("op", ",") and depth == 0:
            args.append([])
        else:
            args[-1].append(tok)
    return args


def docs(sources: Sources, cls: str, start: str) -> dict[str, str]:
    """Each ``.define(`` / ``.defineInternal(`` in the block ``start`` opens in ``cls``: its key and the argument
    after the importance (HIGH, MEDIUM, LOW), the doc in every overload."""
    text = sources.text[cls]
    begin = text.index(start)
    toks = tokens(text[begin:text.index("\n  }\n", begin)])  # the block ends at the object's indentation
    out: dict[str, str] = {}
    for i, (kind, text_) in enumerate(toks):
        if kind == "name" and text_ in ("define", "defineInternal") and toks[i - 1] == ("op", ".") \
                and toks[i + 1] == ("op", "("):
            args = split_args(toks[i + 2:matching(toks, i + 1)])
            at = next(j for j, a in enumerate(args) if a in ([("name", "HIGH")], [("name", "MEDIUM")],
                                                             [("name", "LOW")]))
            key, doc = sources.parse(cls, args[0]), sources.parse(cls, args[at + 1])
            assert isinstance(key, str) and isinstance(doc, str)
            out[key] = doc
    return out


def pieces(text: str, width: int = 100) -> list[str]:
    """``text`` cut after spaces (or within a longer word) into parts of at most ``width`` characters, for
    implicitly concatenated lines."""
    out = [""]
    for word in re.findall(rf"\S{{1,{width // 2}}}\s*|\s+", text):
        if out[-1] and len(out[-1]) + len(word) > width:
            out.append("")
        out[-1] += word
    return [p for p in out if p] or [""]


def main() -> None:
    sources = Sources(sys.argv[1], sys.argv[2])
    broker = docs(sources, "KafkaConfig", "private[server] val configDef")
    topic = docs(sources, "LogConfig", "private val configDef")
    print(f'"""The documentation of each config Kafka {sys.argv[2]} defines, as DescribeConfigs sends it (v3+, '
          'when asked):\n``KafkaConfig``\'s and ``LogConfig``\'s ``ConfigDef`` doc strings.\n\nGenerated by '
          'scripts/gen_kafka_config_docs.py from Kafka\'s sources; not edited by hand."""\n')
    print("from __future__ import annotations\n\nfrom collections.abc import Mapping\n")
    for name, table, what in (("BROKER_CONFIG_DOCS", broker, "``KafkaConfig``'s properties"),
                              ("TOPIC_CONFIG_DOCS", topic, "``LogConfig``'s topic configs")):
        print(f"{name}: Mapping[str, str] = {{")
        for key, doc in table.items():
            print(f"    {key!r}:")
            print("\n".join(f"        {piece!r}" for piece in pieces(doc)) + ",")
        print(f'}}\n"""{what} ({len(table)}), by name, in definition order."""\n')


if __name__ == "__main__":
    main()
