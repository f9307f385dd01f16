use std::collections::HashMap;

use crate::config::Rate;
use crate::error::LimitError;
use crate::key::KeyExtractor;

/// Per-route rates with a default, keyed by what the extractor pulls from a request.
pub struct Policy {
    default: Rate,
    routes: HashMap<String, Rate>,
    pub extractor: KeyExtractor,
}

impl Policy {
    pub fn new(default: Rate) -> Self {
        Policy { default, routes: HashMap::new(), extractor: KeyExtractor::ClientIp }
    }

    pub fn route(mut self, prefix: &str, rate: Rate) -> Self {
        self.routes.insert(prefix.to_string(), rate);
        self
    }

    pub fn rate_for(&self, path: &str) -> Rate {
        self.routes
            .iter()
            .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, rate)| *rate)
            .unwrap_or(self.default)
    }

    pub fn require(&self, key: Option<&str>) -> Result<String, LimitError> {
        key.map(str::to_string).ok_or_else(|| LimitError::UnknownKey(String::new()))
    }
}
