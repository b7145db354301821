"""Provider batch APIs (OpenAI Batch, Anthropic Message Batches, Gemini batch mode) behind one shape."""
