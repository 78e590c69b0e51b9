"""What the warehouse is made of: the SQLModel tables, the one vocabulary, the Public models
the API returns and the data dictionary."""
