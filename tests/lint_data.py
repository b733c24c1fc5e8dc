"""Tool sets for the linter's tests: clearly distinct tools, and a deliberate near-duplicate."""

from __future__ import annotations

from typing import Any


def tool(name: str, description: str, **params: str) -> dict[str, Any]:
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": props, "required": list(params)}}


#: tools that do unrelated things, each well described: no finding of any confusable pair
DISTINCT = [
    tool("get_weather", "Get the weather forecast for a city: temperature, wind and chance of rain "
         "for the next five days.", city="City name, e.g. 'Lyon'."),
    tool("send_email", "Send an email message to one recipient with a subject line and a plain "
         "text body.", to="Recipient address, e.g. 'ana@example.com'.", body="The message text."),
    tool("create_calendar_event", "Create an event in the user's calendar at a start time with a "
         "duration and a title.", start="Start time in ISO 8601, e.g. 2025-03-01T10:00.",
         title="The event's title."),
    tool("translate_text", "Translate a passage of text into another language and return the "
         "translation.", text="The passage to translate.", target="Target language, e.g. 'de'."),
    tool("resize_image", "Resize a picture to a given width and height in pixels, keeping its "
         "format.", image_url="Address of the picture, e.g. https://example.com/a.png."),
    tool("run_sql", "Run a read-only SQL statement on the analytics warehouse and return the "
         "rows.", sql="One SELECT statement."),
    tool("play_song", "Play a song on the living room speaker, by title or artist.",
         title="Song title or artist, e.g. 'Blue in Green'."),
]

#: a paraphrase of get_weather under another name: the pair a linter must find
TWIN = tool("weather_forecast", "Get the forecast of the weather in a city: rain, wind and "
            "temperature over the coming days.", city="The city, e.g. 'Lyon'.")
