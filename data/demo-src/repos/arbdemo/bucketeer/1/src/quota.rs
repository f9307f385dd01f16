use std::collections::HashMap;

use crate::error::LimitError;

/// Monthly allowances per plan, consumed by API calls.
pub struct Quota {
    plans: HashMap<String, u64>,
    used: HashMap<String, u64>,
}

impl Quota {
    pub fn new(plans: HashMap<String, u64>) -> Self {
        Quota { plans, used: HashMap::new() }
    }

    pub fn consume(&mut self, plan: &str, account: &str, calls: u64) -> Result<u64, LimitError> {
        let allowance = *self.plans.get(plan).ok_or_else(|| LimitError::UnknownKey(plan.into()))?;
        let used = self.used.entry(account.to_string()).or_insert(0);
        if *used + calls > allowance {
            return Err(LimitError::InvalidRate(format!("{account} is over its {plan} plan")));
        }
        *used += calls;
        Ok(allowance - *used)
    }
}
