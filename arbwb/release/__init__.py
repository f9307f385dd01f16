"""Release building: snapshot build, corpus merge, validation, download."""
