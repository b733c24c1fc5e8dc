"""The phrases of a poisoned description: instructions to the model, secrets it is asked for.

Each pattern is matched on the normalised text (lint/text.py: NFKC, casefolded, hidden
characters removed) and on the readings decoded from it (lint/decode.py), and weighs what it
says of intent; a description is addressed to the model when the weights of the distinct
patterns it matches reach SCORE. One strong pattern suffices ("ignore previous
instructions", "do not tell the user", an ``<IMPORTANT>`` tag, a chat template's turn
marker); the weaker ones (a credential file's name, "silently", "pass it in the ...
parameter") only count together, and those that merely address the model ("you must",
"before using this tool") only beside a sign of intent, so "Do NOT use this tool for
editing", "Reads the file at path" or "the .env file beside the compose file" stay clean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: a description reaching this score is addressed to the model
SCORE = 1.0


@dataclass(frozen=True)
class Pattern:
    name: str
    weight: float
    regex: re.Pattern[str]
    #: what it finds, for the docs and the finding's message
    says: str


def _p(name: str, weight: float, says: str, *alternatives: str) -> Pattern:
    return Pattern(name, weight, re.compile("|".join(f"(?:{a})" for a in alternatives)), says)


#: a public key or a file's template is no secret: "~/.ssh/id_ed25519.pub", ".env.example"
_TEMPLATE = r"(?![.-](?:example|sample|template|dist|defaults?|tmpl|tpl|schema)\b)"
#: credential files and stores: a tool has no business asking the model for them
KEY_FILES = (r"\.ssh\b(?!/[\w.-]*\.pub\b)(?!/(?:known_hosts|authorized_keys|config)\b)"
             r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub\b)|\.aws/credentials|/etc/(?:passwd|shadow)"
             r"|\.git-credentials|\.netrc\b|\bmcp\.json\b|claude_desktop_config|\.cursor/|wallet\.dat"
             r"|\.gnupg")
#: a project's or a tool's configuration, which may hold a token: developer tools load them
#: as a matter of course ("loads the variables of the .env file")
CONFIG_FILES = rf"\.npmrc\b|\.pypirc\b|\.kube/config|\.docker/config|\.env\b{_TEMPLATE}"
SECRET_FILES = f"{KEY_FILES}|{CONFIG_FILES}"
#: secrets a tool may ask a model to hand over, in a few languages
SECRETS = (SECRET_FILES + r"|api[ _-]?keys?|secret[ _-]?keys?|access[ _-]?tokens?"
           r"|auth(?:entication)?[ _-]?tokens?|private[ _-]?keys?|keychain|bearer|passwords?|passwd"
           r"|credentials?|env(?:ironment)? var(?:iable)?s?|os\.environ"
           r"|process\.env|\$[a-z_]*(?:key|token|secret|password)\b|system prompt|conversation history"
           r"|your (?:hidden |secret |system |original |initial )?(?:instructions|prompt)"
           r"|chat history|previous messages|the (?:whole|full|entire) conversation|seed phrase|mnemonic"
           r"|contraseñas?|clave(?:s)? (?:api|privada)|mot de passe|clé (?:api|privée)|passwort|kennwort"
           r"|schlüssel|senhas?|密码|密钥|私钥|пароль|ключ|パスワード|秘密鍵")
#: the verbs as verbs: "add" and "adds", not "address"; "cat", not "category"
_READ = (r"\b(?:(?:read|cat|open|load|send|pass|attach|copy|upload|dump|print|put|append|insert|add"
         r"|give|forward|collect|extract|leak|fetch|reveal|disclose|repeat|output|show)"
         r"(?:s|es|ed|ied|ies|ing|ting|ding|n)?"
         r"|(?:includ|provid|past|shar|exfiltrat|retriev)(?:e|es|ed|ing))\b"
         r"|\b(?:lee|lea|leer|incluye|envía|envia|lis|lisez|lire|inclu\w*|envo\w*|lies|lese|lesen"
         r"|sende|füge|leia|ler|inclua|envie|leggi|leggere|invia|includi)\b|读取|读|发送|прочит\w*"
         r"|отправ\w*|読み|送信")

PATTERNS: tuple[Pattern, ...] = (
    _p("override", 1.0, "tells the model to disregard its instructions",
       r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,20}\b(?:previous|prior|above|earlier|"
       r"preceding|other|system|all)\b.{0,12}\b(?:instructions?|prompts?|rules|directions|guidelines)",
       r"\b(?:forget|ignore|disregard)\s+(?:everything|anything|all)\s+(?:above|before|else|you were told)",
       r"\b(?:forget|ignore|disregard)\s+(?:all\s+)?(?:of\s+)?(?:the|what is|what's)\s+"
       r"(?:above|said above)\b",
       r"\bignor\w*\b.{0,30}\b(?:instrucciones|instructions|anweisungen|instruções|istruzioni)",
       r"\b(?:vorherigen|bisherigen|vorigen)\s+anweisungen\b.{0,20}\bignor",
       r"忽略.{0,6}(?:指令|指示|说明)", r"игнориру\w*.{0,20}(?:инструкц|указани)",
       r"指示を無視", r"\bnew instructions\b", r"\byou are now\b"),
    _p("secrecy", 1.0, "tells the model to keep something from the user",
       r"\b(?:do not|don't|dont|never|must not|should not)\s+(?:\w+\s+){0,2}?(?:tell|inform|mention|"
       r"reveal|show|notify|alert|disclose|say)\w*\s+(?:\w+\s+){0,3}?(?:to\s+)?(?:the\s+)?users?\b",
       r"\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?users?\b",
       r"\b(?:the\s+)?users?\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|be told|notice)",
       r"\b(?:never|do not|don't)\s+(?:reveal|disclose)\s+(?:this|these|the\s+(?:note|instructions?))\b",
       r"\b(?:keep|hide)\s+(?:this|it)\s+(?:\w+\s+)?(?:secret|hidden)\b",
       r"\bno\s+(?:le\s+)?(?:digas|informes|menciones|cuentes)\b.{0,20}\busuario",
       r"\bsin\s+(?:decirle|informar)\b.{0,12}\busuario",
       r"\bne\s+(?:le\s+|lui\s+)?(?:dis|dites)\s+(?:rien|pas)\b.{0,20}\butilisateur",
       r"\bne pas (?:informer|prévenir|dire)\b.{0,20}\butilisateur",
       r"\bsans (?:le )?dire\b.{0,20}\butilisateur",
       r"\b(?:sag|sage|sagen sie|erzähl|erzähle|verrat)\w*\s+(?:dem|den)\s+(?:benutzer|nutzer)\w*\s+nicht",
       r"\b(?:dem|den)\s+(?:benutzer|nutzer)\w*\s+nichts\b", r"\bohne\s+(?:den|dem)\s+(?:benutzer|nutzer)\w*"
       r"\s+zu\s+(?:informieren|fragen)",
       r"\bnão\s+(?:conte|diga|informe)\b.{0,20}\busuário", r"\bnon\s+dire\b.{0,20}\butente",
       r"不要告诉用户", r"不要(?:让|讓)用户知道", r"不要告訴用戶",
       r"не\s+(?:говори|сообщай)\w*\s+пользовател",
       r"ユーザーに(?:は)?(?:言わない|伝えない|知らせない)"),
    _p("tag", 1.0, "an <IMPORTANT>-style tag of instructions to the model",
       r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|override|assistant|"
       r"system[_-]?prompt)\s*>", r"\[\s*(?:system|important|instructions?|hidden)\b[\w ]{0,20}\]",
       r"\{\{\s*(?:system|instructions?)\s*\}\}"),
    # a file's name alone is how ordinary tools say where they work ("the .env file beside
    # the compose file"): evidence only beside an instruction (read it, send it, keep quiet)
    _p("comment", 1.0, "an HTML comment (hidden where the text is rendered) addressed to the model",
       r"<!--(?:(?!-->).){0,300}?\b(?:ai|assistant|model|llm|agent|claude|gpt|chatgpt|system|"
       r"instructions?|ignore|important|must|you)\b"),
    _p("chat-template", 1.0, "a chat template's turn markers, which forge a system or user turn",
       # an opener with the role it forges (a closer alone is how a renderer names them)
       r"<\|\s*(?:im_start|start_header_id|start)\s*\|>\s*(?:system|user|assistant|developer|tool)\b",
       r"<\|\s*(?:system|user|assistant|developer)\s*\|>", r"\[/?inst\]", r"<</?sys>>",
       r"<\s*/?\s*(?:start_of_turn|end_of_turn)\s*>"),
    _p("role-play", 1.0, "a role-play jailbreak: the model is told to be another, unbound assistant",
       r"\bdo anything now\b", r"\b(?:dan|developer|god|jailbreak|unrestricted|unfiltered)\s+mode\b",
       r"\b(?:act|acting|behave|respond|answer|pretend|roleplay|role-play)\w*\s+(?:as|like|to be)\s+"
       r"(?:if you (?:were|are)\s+)?(?:an?\s+)?(?:dan|stan|dude|un(?:restricted|filtered|censored|"
       r"aligned)|jailbroken|evil|rogue)\b",
       r"\byou are (?:now )?(?:dan|free of|freed from|no longer bound|not bound)\b",
       r"\byou are no longer (?:an? )?(?:claude|chatgpt|gpt|gemini|llama|assistant|ai|model|bound|"
       r"restricted)\b",
       r"\b(?:pretend|imagine|roleplay|role-play)\w*\b.{0,40}\b(?:without (?:any )?(?:restrictions|limits|"
       r"filters|rules|guidelines|censorship)|no (?:restrictions|limits|filters|rules|guidelines))\b"),
    _p("secret-file", 0.5, "names a credential file", KEY_FILES),
    _p("config-file", 0.3, "names a configuration file that may hold a token", CONFIG_FILES),
    # "loads a kubeconfig without their credentials" asks for none
    _p("read-secret", 0.6, "asks for a secret, a file's contents or the conversation",
       rf"(?:{_READ})(?:(?!\b(?:without|no|not|never|except|excluding|masked|redacted|omit\w*)\b)"
       rf".){{0,50}}(?:{SECRETS})"),
    _p("exfiltrate", 0.6, "tells the model to put data in a parameter or send it somewhere",
       r"\b(?:pass|put|include|send|add|place|insert|append)\w*\s+(?:it|them|this|that|its|their|the"
       r"\s+\w+)\b.{0,40}\b(?:as|in|into|to)\s+(?:the\s+)?['\"`]?\w+['\"`]?\s+(?:parameter|argument|field)",
       r"\b(?:send|post|upload|forward)\w*\b.{0,40}\bhttps?://", r"\b(?:bcc|cc)\b.{0,30}@",
       r"\b(?:send|forward|copy|cc|bcc|mail)\w*\b.{0,40}\b(?:to|copy)\s+[\w.+-]+@[\w-]+\.\w"),
    _p("before-use", 0.5, "sets the model a task before it uses the tool",
       r"\b(?:before|prior to)\s+(?:using|calling|invoking|running)\s+(?:this|any)\s+(?:tool|function)",
       r"\bantes de (?:usar|utilizar|llamar)\b", r"\bavant d'(?:utiliser|appeler)\b",
       r"\bbevor sie\b.{0,20}\b(?:verwenden|benutzen|aufrufen)", r"使用.{0,4}(?:之前|前)",
       r"\bперед\s+(?:использованием|вызовом)\b"),
    _p("command", 0.5, "commands addressed to the model",
       r"\byou (?:must|have to|need to|should) (?:always|first|also|now)\b",
       r"\b(?:the\s+)?(?:assistant|model|ai|llm|agent)\s+(?:must|should|has to)\b",
       r"\bnote to (?:the )?(?:ai|assistant|model|llm|agent)\b", r"\bfrom now on\b",
       r"\bthis is (?:very |extremely )?important\b", r"\bvery very important\b",
       r"\b(?:otherwise|or else) the (?:tool|system|application) will (?:crash|fail|break)",
       r"(?:^|\s)#{2,}\s*(?:instruction|system|response)s?\s*:"),
    _p("concealment", 0.5, "asks for something to be done quietly",
       r"\b(?:silently|secretly|quietly|covertly|discreetly)\b", r"\bwithout (?:asking|confirmation|"
       r"mentioning|saying)\b",
       r"\b(?:do not|don't|dont|never)\s+(?:mention|reveal|disclose)\s+(?:it|this|that)\b",
       r"\ben secreto\b|\bsecrètement\b|\bheimlich\b|\bsecretamente\b|悄悄|тайно"),
)


#: patterns that only say a text addresses the model: a server's instructions do by nature,
#: and a tool's description may ("before using this tool, call get_hash first"); they count
#: beside a sign of intent only (a secret asked for, a destination, concealment, ...)
ADDRESSING = frozenset({"command", "before-use"})


@dataclass(frozen=True)
class Match:
    pattern: Pattern
    text: str
    #: how the text was read when it matched ("" as written; else "base64", "rot13", ...)
    reading: str = ""

    @property
    def how(self) -> str:
        return f", read as {self.reading}" if self.reading else ""


def matches(readings: tuple[str, ...],
            decoded: tuple[tuple[str, str], ...] = ()) -> list[Match]:
    """The patterns the texts match (each once: its first matched phrase), the texts as
    written first, then the (how, text) readings decoded from them."""
    found = []
    for pattern in PATTERNS:
        for how, text in (*(("", r) for r in readings), *decoded):
            m = pattern.regex.search(text)
            if m:
                found.append(Match(pattern, m.group(0), how))
                break
    return found


def counts(found: list[Match]) -> list[Match]:
    """The matches that count: none when all of them only address the model."""
    if all(m.pattern.name in ADDRESSING for m in found):
        return []
    return found


def score(found: list[Match]) -> float:
    """The weight of the distinct patterns found that count (see counts())."""
    return round(sum(m.pattern.weight for m in counts(found)), 2)
