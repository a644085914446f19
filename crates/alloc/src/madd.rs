//! MADD, Varys's Minimum-Allocation-for-Desired-Duration (Varys, SIGCOMM
//! 2014, 5.3, and its effective bottleneck, 5.2).
//!
//! For one coflow over residual link capacities, the effective bottleneck
//! time is `Γ = max_l load(l) / residual(l)` where `load(l)` is the coflow's
//! remaining bits through link `l`. Every flow then gets
//! `remaining_bits / Γ`, so all of them finish together at `Γ` and the
//! coflow uses no more than it needs. A coflow that crosses a link with no
//! residual capacity has `Γ = ∞` and gets nothing.

use coflowkit_model::LinkId;

/// Scratch space for [`effective_bottleneck`] and [`madd`]: per-link load,
/// reset lazily.
#[derive(Debug, Default, Clone)]
pub struct LinkLoad {
    load: Vec<f64>,
    touched: Vec<u32>,
}

impl LinkLoad {
    fn reset(&mut self, n_links: usize) {
        if self.load.len() < n_links {
            self.load.resize(n_links, 0.0);
        }
        for &l in &self.touched {
            self.load[l as usize] = 0.0;
        }
        self.touched.clear();
    }
}

/// Γ in seconds for flows given as (path, remaining bytes) over `residual`
/// (bits/s per link). Zero for a coflow with nothing left.
pub fn effective_bottleneck<'a>(
    flows: impl IntoIterator<Item = (&'a [LinkId], f64)>,
    residual: &[f64],
    scratch: &mut LinkLoad,
) -> f64 {
    scratch.reset(residual.len());
    for (path, rem) in flows {
        for &LinkId(l) in path {
            if scratch.load[l as usize] == 0.0 {
                scratch.touched.push(l);
            }
            scratch.load[l as usize] += rem * 8.0;
        }
    }
    let mut gamma: f64 = 0.0;
    for &l in &scratch.touched {
        let load = scratch.load[l as usize];
        if load <= 0.0 {
            continue;
        }
        let cap = residual[l as usize];
        let t = if cap <= crate::EPS {
            f64::INFINITY
        } else {
            load / cap
        };
        gamma = gamma.max(t);
    }
    gamma
}

/// MADD rates (bits/s) for flows given as (path, remaining bytes): each
/// flow gets `remaining * 8 / Γ`; writes them to `rates`, takes them from
/// `residual` and returns Γ.
pub fn madd<'a>(
    flows: impl IntoIterator<Item = (&'a [LinkId], f64)> + Clone,
    residual: &mut [f64],
    scratch: &mut LinkLoad,
    rates: &mut Vec<f64>,
) -> f64 {
    rates.clear();
    let gamma = effective_bottleneck(flows.clone(), residual, scratch);
    for (path, rem) in flows {
        let r = if gamma.is_finite() && gamma > 0.0 {
            rem * 8.0 / gamma
        } else {
            0.0
        };
        rates.push(r);
        for &LinkId(l) in path {
            residual[l as usize] = (residual[l as usize] - r).max(0.0);
        }
    }
    gamma
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn madd_finishes_flows_together() {
        // Two flows from host 0 (link 0) to links 1 and 2; 1000 and 500 bytes.
        let p1 = [LinkId(0), LinkId(1)];
        let p2 = [LinkId(0), LinkId(2)];
        let flows = [(&p1[..], 1000.0), (&p2[..], 500.0)];
        let mut res = vec![8000.0; 3];
        let mut rates = vec![];
        let g = madd(
            flows.iter().copied(),
            &mut res,
            &mut LinkLoad::default(),
            &mut rates,
        );
        assert_eq!(g, 1.5); // 12000 bits over 8000 bit/s on link 0
        assert_eq!(rates[0] * g, 8000.0);
        assert_eq!(rates[1] * g, 4000.0);
        assert!(res[0].abs() < 1e-9);
    }
}
