//! Whether the server offers each contract, decided from the pattern of its answers
//! before any clause runs: a contract it does not offer is skipped, never failed.

use crate::catalogue::ContractId;
use crate::http::Reply;
use crate::session::Session;

/// Which contracts the server offers: every one but those named, each with why not.
/// The embeddings endpoint answering offers every contract (the rerank clauses find
/// out for themselves whether rerank is served); a server without it is audited on
/// rerank alone.
#[derive(Debug, Default)]
pub(crate) struct Offered {
    not_offered: Vec<(ContractId, String)>,
}

impl Offered {
    pub(crate) fn offers(&self, contract: ContractId) -> bool {
        self.why_not(contract).is_none()
    }

    /// Why the server does not offer `contract`, where it does not.
    pub(crate) fn why_not(&self, contract: ContractId) -> Option<&str> {
        self.not_offered
            .iter()
            .find(|(c, _)| *c == contract)
            .map(|(_, why)| why.as_str())
    }

    /// Each contract not offered, with why.
    pub(crate) fn not_offered(&self) -> &[(ContractId, String)] {
        &self.not_offered
    }

    fn all_but(contract: ContractId, why: String) -> Self {
        Offered {
            not_offered: vec![(contract, why)],
        }
    }
}

/// Which contracts the server offers: embeddings and rerank decided together, then
/// speech-to-text by its own route. A server offering only speech is audited on it
/// alone; one offering none of the three is not audited.
pub(crate) async fn offered(session: &Session) -> Result<Offered, String> {
    let first = embeddings_or_rerank(session).await;
    let speech =
        super::speech::requests::not_offered(session, embeds_the_model(session).await).await;
    match (first, speech) {
        (Ok(mut offered), why) => {
            offered
                .not_offered
                .extend(why.map(|why| (ContractId::Speech, why)));
            Ok(offered)
        }
        (Err(why), None) => Ok(Offered {
            not_offered: vec![
                (ContractId::Embeddings, why.clone()),
                (ContractId::Rerank, why),
            ],
        }),
        (Err(why), Some(speech)) => Err(format!("{why}; {speech}")),
    }
}

/// Whether the server offers embeddings, from the pattern of its answers, in no
/// language: the plain request answered (any status but a refusal) is an embeddings
/// endpoint. A refusal is not yet "not offered": the endpoint is not offered when it
/// is absent (404, 405, 501), or when the batch request is refused alike (whatever it
/// carries: TEI serving a cross-encoder answers 424 "Model is not an embedding model")
/// while rerank is served. A server offering neither is an error here (the caller asks
/// whether it offers speech); one that refuses every embeddings request and reranks
/// nothing is audited on embeddings (its refusals are what it does).
async fn embeddings_or_rerank(session: &Session) -> Result<Offered, String> {
    use super::embeddings::requests;
    use super::rerank::requests as rerank;
    let Ok(plain) = requests::single(session).await else {
        // A budget, a stall or Ctrl-C: the clause run says so clause by clause.
        return Ok(Offered::default());
    };
    if !plain.is_absent() && !refused_whatever_it_carries(session, &plain).await {
        return Ok(Offered::default());
    }
    let why = format!(
        "embeddings is not offered: the plain request to {} was answered {}",
        session.transport().target().url(&requests::ROUTE).path(),
        plain.summary()
    );
    match rerank::route(session).await {
        Ok(Some(_)) => Ok(Offered::all_but(ContractId::Embeddings, why)),
        Ok(None) if !plain.is_absent() => Ok(Offered::default()),
        Ok(None) => Err(format!(
            "{why}, and no rerank route serves the portable request ({}): check --endpoint",
            rerank::tried(session)
        )),
        Err(e) => Err(format!("{why}; the rerank routes: {e}")),
    }
}

/// Whether the embeddings route answered the plain request, with the run's model, with
/// vectors (the session's cache answers it: it was the first request of the run).
async fn embeds_the_model(session: &Session) -> bool {
    super::embeddings::requests::single(session)
        .await
        .is_ok_and(|reply| reply.is_success() && reply.float_vectors().is_ok())
}

/// Whether the plain request's refusal is the batch request's too: the endpoint
/// refuses what it is sent whatever that is.
async fn refused_whatever_it_carries(session: &Session, plain: &Reply) -> bool {
    if !plain.is_refusal() {
        return false;
    }
    match super::embeddings::requests::batch(session).await {
        Ok(batch) => plain.refused_alike(&batch),
        Err(_) => false,
    }
}
