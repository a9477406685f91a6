"""READ through any OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek, vLLM, Ollama).

The only package that imports ``openai``, so the rest of the loop can be tested and run
offline. Every failure ends up as one of the loop's ``LLMError`` kinds, because the
caller decides what to retry by that kind alone: transient errors are worth a later
attempt, configuration errors and hopeless answers are not.

``extractor`` holds the conversation (retries, corrections, the structured-output mode);
``prompts`` what is said to the model; ``answers`` how its answers are read; ``endpoint``
what the SDK hands back and how its errors read in words.
"""

from .extractor import OpenAIExtractor

__all__ = ["OpenAIExtractor"]
