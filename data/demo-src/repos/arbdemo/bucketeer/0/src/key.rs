/// Which part of a request identifies the caller.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyExtractor {
    ClientIp,
    Header(String),
    ApiToken,
}

impl KeyExtractor {
    pub fn extract<'a>(&self, ip: &'a str, headers: &'a [(String, String)]) -> Option<&'a str> {
        match self {
            KeyExtractor::ClientIp => Some(ip),
            KeyExtractor::Header(name) => headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str()),
            KeyExtractor::ApiToken => headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .and_then(|(_, v)| v.strip_prefix("Bearer ")),
        }
    }
}
